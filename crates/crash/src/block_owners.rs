//! Which file each block of a recording belongs to, for `crash --show-log` (docs/crash.md,
//! "Reading the log"): asked of the filesystem's own debugger, read-only, on the image as
//! the unmount at the end of the recording left it (the journal checkpointed, so every
//! block is where its file's map says). ext4: debugfs's `icheck` (block → inode), `ncheck`
//! (inode → path) and `testb` (in use?); xfs: xfs_db's `blockget -n` and `blockuse -n`.
//! A block is named by what owns it at the end: a file renamed since is named by its new
//! name, a file deleted since leaves its blocks free.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use lab::filesystems::{BlockNames, CrashFs};
use lab::shell::Step;

/// Both filesystems are made with 4 KiB blocks (`lab::filesystems`).
const BLOCK: u64 = 4096;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// A file's or directory's block (its data, or its extent map), by its path from the
    /// filesystem's root.
    File(String),
    Journal,
    /// The filesystem's own (superblock, bitmaps, inode tables, free-space trees).
    Metadata,
    /// Free at the end: a file deleted or replaced since.
    Free,
}

impl Owner {
    pub fn label(&self) -> String {
        match self {
            Owner::File(path) => path.clone(),
            Owner::Journal => "journal".into(),
            Owner::Metadata => "metadata".into(),
            Owner::Free => "free at the end".into(),
        }
    }
}

/// The owners of the blocks asked about.
#[derive(Debug, Default)]
pub struct BlockOwners {
    owners: BTreeMap<u64, Owner>,
}

impl BlockOwners {
    /// The distinct owners of the bytes `[offset, offset + len)`, in block order, as words.
    pub fn labels(&self, offset: u64, len: u64) -> Vec<String> {
        let mut labels: Vec<String> = Vec::new();
        for block in blocks_of(offset, len) {
            let label = self.owners.get(&block).map_or_else(|| "not named".into(), Owner::label);
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        labels
    }
}

/// The blocks (of 4 KiB) that `[offset, offset + len)` touches.
pub fn blocks_of(offset: u64, len: u64) -> impl Iterator<Item = u64> {
    offset / BLOCK..(offset + len).div_ceil(BLOCK)
}

/// Names `blocks` of the filesystem `fs` in the image file `image`; `scratch` is a file
/// it may write its debugger's commands to. None where the filesystem's blocks are not
/// named (btrfs); Err: the debugger failed.
pub fn name(fs: &CrashFs, image: &Path, blocks: &BTreeSet<u64>, scratch: &Path) -> Result<Option<BlockOwners>, String> {
    match fs.blocks {
        BlockNames::Debugfs => ext4(image, blocks, scratch).map(Some),
        BlockNames::XfsDb => xfs(image, blocks).map(Some),
        BlockNames::Unnamed => Ok(None),
    }
}

/// The ext4 inodes that are not files: the root directory's is named; the journal's is
/// the journal; the others (bad blocks, the resize inode, quota …) are metadata.
const EXT4_ROOT: u64 = 2;
const EXT4_JOURNAL: u64 = 8;
const EXT4_FIRST_FILE: u64 = 11;

fn ext4(image: &Path, blocks: &BTreeSet<u64>, scratch: &Path) -> Result<BlockOwners, String> {
    let debugfs = |commands: String| -> Result<String, String> {
        std::fs::write(scratch, commands)
            .map_err(|e| format!("cannot write {}: {}", scratch.display(), error::plain(&e)))?;
        Step::new("debugfs").arg("-f").arg(scratch).arg(image).run()
    };
    let list: Vec<String> = blocks.iter().map(u64::to_string).collect();
    let icheck: String = list.chunks(1000).map(|c| format!("icheck {}\n", c.join(" "))).collect();
    let inode_of = parse_icheck(&debugfs(icheck)?);
    let inodes: BTreeSet<u64> = inode_of.values().flatten().copied().filter(|&i| i >= EXT4_FIRST_FILE).collect();
    let mut paths = BTreeMap::new();
    if !inodes.is_empty() {
        let list: Vec<String> = inodes.iter().map(u64::to_string).collect();
        paths = parse_ncheck(&debugfs(format!("ncheck {}\n", list.join(" ")))?);
    }
    let unowned: Vec<String> = inode_of.iter().filter(|(_, i)| i.is_none()).map(|(b, _)| b.to_string()).collect();
    let mut in_use = BTreeSet::new();
    if !unowned.is_empty() {
        let testb: String = unowned.iter().map(|b| format!("testb {b}\n")).collect();
        in_use = parse_testb(&debugfs(testb)?);
    }
    let owners = inode_of
        .into_iter()
        .map(|(block, inode)| {
            let owner = match inode {
                None if in_use.contains(&block) => Owner::Metadata,
                None => Owner::Free,
                Some(EXT4_JOURNAL) => Owner::Journal,
                Some(EXT4_ROOT) => Owner::File("/".into()),
                Some(i) if i < EXT4_FIRST_FILE => Owner::Metadata,
                Some(i) => Owner::File(paths.get(&i).cloned().unwrap_or_else(|| format!("inode {i}, without a name"))),
            };
            (block, owner)
        })
        .collect();
    Ok(BlockOwners { owners })
}

/// debugfs `icheck`'s table: "2066\t13", "9000\t<block not found>".
fn parse_icheck(out: &str) -> BTreeMap<u64, Option<u64>> {
    out.lines()
        .filter_map(|line| {
            let (block, inode) = line.split_once('\t')?;
            Some((block.trim().parse().ok()?, inode.trim().parse().ok()))
        })
        .collect()
}

/// debugfs `ncheck`'s table: "13\t/d/settings.json" (a directory as "12\t//d"); the first
/// name of an inode with several.
fn parse_ncheck(out: &str) -> BTreeMap<u64, String> {
    let mut paths = BTreeMap::new();
    for line in out.lines() {
        let Some((inode, path)) = line.split_once('\t') else { continue };
        let Ok(inode) = inode.trim().parse::<u64>() else { continue };
        let path = path.trim().trim_start_matches('/');
        paths.entry(inode).or_insert_with(|| path.to_string());
    }
    paths
}

/// debugfs `testb`'s lines: "Block 9000 marked in use" / "Block 9001 not in use".
fn parse_testb(out: &str) -> BTreeSet<u64> {
    out.lines()
        .filter(|line| line.ends_with("marked in use"))
        .filter_map(|line| line.split_whitespace().nth(1)?.parse().ok())
        .collect()
}

fn xfs(image: &Path, blocks: &BTreeSet<u64>) -> Result<BlockOwners, String> {
    let db = |commands: &[String]| {
        let mut step = Step::new("xfs_db").arg("-r");
        for command in commands {
            step = step.arg("-c").arg(command);
        }
        step.arg(image).run()
    };
    let sb = db(&["sb 0".into(), "p agblocks agblklog blocksize".into()])?;
    let field = |name: &str| -> Result<u64, String> {
        sb.lines()
            .find_map(|l| {
                l.split_once(" = ").filter(|(k, _)| k.trim() == name).and_then(|(_, v)| v.trim().parse().ok())
            })
            .ok_or_else(|| format!("xfs_db printed no {name}: {sb}"))
    };
    let (agblocks, agblklog) = (field("agblocks")?, field("agblklog")?);
    if field("blocksize")? != BLOCK {
        return Err(format!("xfs_db: blocks of {} bytes, not {BLOCK}", field("blocksize")?));
    }
    // Linear block → xfs_db's fsblock: the AG number above agblklog bits.
    let fsblock = |linear: u64| ((linear / agblocks) << agblklog) | (linear % agblocks);
    let mut commands = vec!["blockget -n".to_string()];
    for (start, count) in runs(blocks) {
        // A run does not cross into the next allocation group: blockuse counts fsblocks.
        let mut at = start;
        while at < start + count {
            let within = (agblocks - at % agblocks).min(start + count - at);
            commands.push(format!("fsblock {}", fsblock(at)));
            commands.push(format!("blockuse -n -c {within}"));
            at += within;
        }
    }
    let out = db(&commands)?;
    Ok(BlockOwners { owners: parse_blockuse(&out, agblocks) })
}

/// Consecutive runs of `blocks`: (first, count).
fn runs(blocks: &BTreeSet<u64>) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &block in blocks {
        match runs.last_mut() {
            Some((start, count)) if *start + *count == block => *count += 1,
            _ => runs.push((block, 1)),
        }
    }
    runs
}

/// xfs_db `blockuse -n`'s lines: "block 24 (0/24) type data inode 132 d/settings.json",
/// "block 10 (0/10) type log", "block 16 (0/16) type inode", "block 13 (0/13) type free2".
fn parse_blockuse(out: &str, agblocks: u64) -> BTreeMap<u64, Owner> {
    let mut owners = BTreeMap::new();
    for line in out.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 5 || words[0] != "block" || words[3] != "type" {
            continue;
        }
        let Some((ag, agbno)) = words[2].trim_matches(['(', ')']).split_once('/') else { continue };
        let (Ok(ag), Ok(agbno)) = (ag.parse::<u64>(), agbno.parse::<u64>()) else { continue };
        let kind = words[4];
        let owner = match (kind, words.get(5), words.get(6), words.get(7)) {
            ("log", ..) => Owner::Journal,
            (_, Some(&"inode"), Some(inode), name)
                if kind.starts_with("data") || kind.starts_with("dir") || kind.starts_with("bmap") =>
            {
                Owner::File(name.map_or_else(|| format!("inode {inode}, without a name"), |n| n.to_string()))
            }
            _ if kind.starts_with("free") => Owner::Free,
            _ => Owner::Metadata,
        };
        owners.insert(ag * agblocks + agbno, owner);
    }
    owners
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_debuggers_tables_are_read_as_they_print_them() {
        let icheck = "Block\tInode number\n2066\t13\n9000\t<block not found>\n15\t8\n";
        assert_eq!(parse_icheck(icheck), BTreeMap::from([(15, Some(8)), (2066, Some(13)), (9000, None)]));
        let ncheck = "Inode\tPathname\n12\t//d\n13\t/d/settings.json\n13\t/d/other-link\n";
        assert_eq!(parse_ncheck(ncheck), BTreeMap::from([(12, "d".into()), (13, "d/settings.json".into())]));
        assert_eq!(parse_testb("Block 9000 marked in use\nBlock 9001 not in use\n"), BTreeSet::from([9000]));
        let blockuse = "block 10 (0/10) type log\nblock 16 (0/16) type inode\n\
                        block 24 (0/24) type data inode 132 d/settings.json\nblock 32771 (1/3) type free2\n\
                        block 40 (0/40) type dir inode 128\n";
        assert_eq!(
            parse_blockuse(blockuse, 20480),
            BTreeMap::from([
                (10, Owner::Journal),
                (16, Owner::Metadata),
                (24, Owner::File("d/settings.json".into())),
                (40, Owner::File("inode 128, without a name".into())),
                (20483, Owner::Free),
            ])
        );
        assert_eq!(runs(&BTreeSet::from([1, 2, 3, 7, 9, 10])), [(1, 3), (7, 1), (9, 2)]);
    }

    #[test]
    fn a_write_is_labelled_by_the_owners_of_its_blocks_in_order() {
        let owners = BlockOwners {
            owners: BTreeMap::from([(1, Owner::Journal), (2, Owner::File("a".into())), (3, Owner::Journal)]),
        };
        assert_eq!(owners.labels(4096, 3 * 4096), ["journal", "a"]);
        assert_eq!(owners.labels(4096 + 100, 10), ["journal"], "a part of a block is the block's");
        assert_eq!(owners.labels(5 * 4096, 4096), ["not named"]);
        assert_eq!(blocks_of(4000, 200).collect::<Vec<_>>(), [0, 1]);
    }
}
