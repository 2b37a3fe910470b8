//! Statistics over the runs of a case, and what they show (advice). Pure functions: no I/O.

pub mod advice;
pub mod outliers;
pub mod significance;
pub mod stats;
