//! The pages of the buffer a case's writers write from (`--pages`).
//!
//! An O_DIRECT call's request is built from the caller's pages, one segment a page, and a
//! device takes only so many segments a request: from 4 KiB pages a 4 MiB O_DIRECT call
//! reached this machine's disk as 512 KiB requests, from huge pages as one request of 4
//! MiB, about twice as fast (docs/measurement.md, "The writers' pages"). A buffered write
//! copies the bytes into the page cache, where the source's pages matter little. A
//! program gets huge pages by asking: an allocation aligned to 2 MiB and
//! `madvise(MADV_HUGEPAGE)` where transparent huge pages are `madvise` (as here), or any
//! large allocation where they are `always`.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pages {
    /// An ordinary mapping, as a program's own allocation gets it: 4 KiB pages where
    /// transparent huge pages are given only on request.
    #[default]
    Ordinary,
    /// Aligned to 2 MiB and asked for huge pages (`MADV_HUGEPAGE`).
    Huge,
}

impl Pages {
    pub const ALL: [Pages; 2] = [Pages::Ordinary, Pages::Huge];

    pub fn name(self) -> &'static str {
        match self {
            Pages::Ordinary => "ordinary",
            Pages::Huge => "huge",
        }
    }

    /// For serde's `skip_serializing_if`: a case in ordinary pages says nothing of them,
    /// as every case did before the field.
    pub fn is_ordinary(&self) -> bool {
        *self == Pages::Ordinary
    }
}

impl FromStr for Pages {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        crate::names::find(&Pages::ALL, Pages::name, text)
            .map_err(|known| format!("unknown pages '{text}' (known: {known})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_others_are_refused() {
        for pages in Pages::ALL {
            assert_eq!(pages.name().parse::<Pages>(), Ok(pages));
        }
        assert_eq!("2MiB".parse::<Pages>(), Err("unknown pages '2MiB' (known: ordinary, huge)".into()));
        assert_eq!(serde_json::to_string(&Pages::Huge).unwrap(), "\"huge\"");
    }
}
