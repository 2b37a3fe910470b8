//! Statistics over the runs of a case, whether a difference is real, what the cases
//! show (advice), and `compare` of saved results. Pure functions: no I/O.

pub mod advice;
pub mod ceilings;
pub mod compare;
pub mod outliers;
pub mod significance;
pub mod stats;
