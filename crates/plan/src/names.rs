//! The named choices of the command line (file states, layouts, pages, sources,
//! patterns): each is parsed from its name the same way, and a name that is none of
//! them gets the known ones in its error line, taken from the same list.

/// The item of `all` that `name` calls `text`, or `Err` with every known name, joined by
/// ", " for the caller's line ("unknown state 'dense' (known: {known})").
pub fn find<T: Copy>(all: &[T], name: fn(T) -> &'static str, text: &str) -> Result<T, String> {
    all.iter()
        .copied()
        .find(|&item| name(item) == text)
        .ok_or_else(|| all.iter().map(|&item| name(item)).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_is_found_by_its_name_and_a_stranger_gets_every_known_name() {
        let name = |n: u8| ["one", "two", "three"][n as usize];
        assert_eq!(find(&[0, 1, 2], name, "two"), Ok(1));
        assert_eq!(find(&[0, 1, 2], name, "four"), Err("one, two, three".to_string()));
    }
}
