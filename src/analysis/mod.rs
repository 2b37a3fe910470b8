//! Statistics over the runs of a case. Pure functions: no I/O.

pub mod outliers;
pub mod significance;
pub mod stats;
