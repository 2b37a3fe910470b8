//! What every subcommand's validation shares: the one-line error.

/// Bad input, as the single line the user will see.
#[derive(Debug)]
pub struct UsageError(pub String);
