//! A case's statistics derived from its runs (`summarize`), what the cases show (advice),
//! the ceilings a case is held against, and `compare` of saved results, drawn with the
//! statistics of [`stats`]. Pure functions: no I/O.

pub mod advice;
pub mod case_facts;
pub mod ceilings;
pub mod compare;
pub mod summarize;
