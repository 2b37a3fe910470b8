//! Files whose data stays in memory, in a comparison. tmpfs and ramfs are memory
//! themselves: a sync there has nothing to do, so their durable figures are buffered
//! ones. A filesystem on RAM-backed devices (ext4 on a loop device over a file on tmpfs,
//! bindfs over a tmpfs directory: everything the lab builds) does its own work in a
//! sync, but nothing reaches a device (docs/durability.md): its durable figures are that
//! filesystem's cost, comparable with its peers' but not with a disk's.

use context::TargetInfo;

/// Of `candidates` (indexes into `targets`) for a goal about durability, those left
/// out: tmpfs and ramfs always; a filesystem whose data stays in memory wherever another
/// candidate keeps its data elsewhere, whose syncs paid for what it did not.
pub fn left_out_of_durable(targets: &[&TargetInfo], candidates: &[usize]) -> Vec<usize> {
    let elsewhere = candidates.iter().any(|&file| !targets[file].in_memory());
    candidates
        .iter()
        .copied()
        .filter(|&file| targets[file].memory_filesystem() || (elsewhere && targets[file].in_memory()))
        .collect()
}

/// Said once, above the comparison, where a file keeps its data in memory: which, and
/// what a sync there measures.
pub fn note(labels: &[&str], targets: &[&TargetInfo]) -> Option<String> {
    let memory: Vec<&str> =
        labels.iter().zip(targets).filter(|(_, target)| target.in_memory()).map(|(label, _)| *label).collect();
    if memory.is_empty() {
        return None;
    }
    if memory.len() == targets.len() {
        return Some(format!(
            "every file keeps its data in memory ({}; each result's target.backing_chain says how): durability \
             there measures the filesystems' own work, not a device",
            memory.join(", ")
        ));
    }
    let verb = if memory.len() == 1 { "keeps its" } else { "keep their" };
    Some(format!(
        "{} {verb} data in memory (target.backing): a sync there measures the filesystem's own work, not a device",
        memory.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use context::backing::Backing;

    fn target(fs_type: &str, backing: Backing) -> TargetInfo {
        TargetInfo { fs_type: fs_type.into(), backing, ..TargetInfo::default() }
    }

    #[test]
    fn ram_backed_filesystems_compete_only_among_themselves() {
        let tmpfs = target("tmpfs", Backing::Ram);
        let ext4_ram = target("ext4", Backing::Ram);
        let fuse_ram = target("fuse", Backing::Ram);
        let xfs_disk = target("xfs", Backing::Device);
        // The lab: tmpfs left out, the RAM-backed filesystems ranked against each other.
        let lab = [&tmpfs, &ext4_ram, &fuse_ram];
        assert_eq!(left_out_of_durable(&lab, &[0, 1, 2]), [0]);
        // Beside a disk, a filesystem over RAM wins nothing durable.
        let mixed = [&tmpfs, &ext4_ram, &xfs_disk];
        assert_eq!(left_out_of_durable(&mixed, &[0, 1, 2]), [0, 1]);
        assert_eq!(left_out_of_durable(&mixed, &[1]), Vec::<usize>::new(), "alone among the candidates");
        // An old result of tmpfs (no backing recorded) is still memory.
        let old_tmpfs = target("tmpfs", Backing::Unknown);
        assert_eq!(left_out_of_durable(&[&old_tmpfs, &xfs_disk], &[0, 1]), [0]);
    }

    #[test]
    fn the_note_names_the_files_in_memory_once() {
        let (tmpfs, ext4_ram, xfs_disk) =
            (target("tmpfs", Backing::Ram), target("ext4", Backing::Ram), target("xfs", Backing::Device));
        let all = note(&["tmpfs", "ext4"], &[&tmpfs, &ext4_ram]).unwrap();
        assert!(all.starts_with("every file keeps its data in memory (tmpfs, ext4; "), "{all}");
        assert!(all.ends_with("durability there measures the filesystems' own work, not a device"), "{all}");
        let some = note(&["A", "B"], &[&ext4_ram, &xfs_disk]).unwrap();
        assert!(some.starts_with("A keeps its data in memory"), "{some}");
        assert_eq!(note(&["xfs"], &[&xfs_disk]), None);
    }
}
