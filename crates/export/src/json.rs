//! `--export-json`: the whole result, schema `writebench.v3`.

use std::io::{self, Write};

use result::ResultFile;

pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, result).map_err(io::Error::other)?;
    out.write_all(b"\n")
}
