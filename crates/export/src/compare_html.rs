//! `compare --export-html`: the comparison as one self-contained page, in the report's
//! style and under its Content-Security-Policy: the ratio chart, then the same text as
//! the terminal (context differences, cases, answer, summary) so that nothing differs
//! between the two.

use std::io::{self, Write};

use html_escape::encode_text as text;

use crate::charts::{ratio, side_by_side};
use crate::html::page_start;
use result::compare::CompareResult;

pub fn render(compared: &CompareResult, out: &mut dyn Write) -> io::Result<()> {
    let title = format!("writebench compare: {} is the baseline", compared.files[0].label);
    page_start(&title, out)?;
    writeln!(out, "<header>\n<h1>{}</h1>\n<ul>", text(&title))?;
    for file in &compared.files {
        writeln!(out, "<li>{}: {}</li>", text(&file.label), text(&file.name))?;
    }
    writeln!(out, "</ul>\n</header>")?;
    // The lab's comparison (files that are filesystems): their rates side by side first.
    if !compared.across.is_empty() {
        if let Some(chart) = side_by_side::chart(compared) {
            writeln!(out, "<section id=\"side-by-side\">\n<h2>Side by side</h2>")?;
            writeln!(out, "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>", chart.svg, text(&chart.caption))?;
            writeln!(out, "</section>")?;
        }
    }
    writeln!(out, "<section id=\"charts\">\n<h2>Ratios</h2>")?;
    match ratio::chart(compared) {
        Some(chart) => {
            writeln!(out, "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>", chart.svg, text(&chart.caption))?
        }
        None => {
            writeln!(out, "<p class=\"none\">No case could be tested: each needs at least two runs in both files.</p>")?
        }
    }
    writeln!(out, "</section>")?;
    let mut terminal = Vec::new();
    crate::compare::render(compared, &mut terminal)?;
    writeln!(
        out,
        "<section id=\"comparison\">\n<h2>Comparison</h2>\n<pre>{}</pre>\n</section>",
        text(&String::from_utf8_lossy(&terminal))
    )?;
    writeln!(out, "</main>\n</body>\n</html>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::ResultFile;

    /// A real result (written by `run` before schema v2), and a copy whose every run
    /// took twice as long: each tested case reads ×0.5 against it.
    fn pair() -> Vec<(String, ResultFile)> {
        let real: ResultFile = serde_json::from_str(include_str!("../../../tests/data/v1-result.json")).unwrap();
        let mut slower = real.clone();
        for case in &mut slower.cases {
            for run in &mut case.runs {
                run.write_seconds *= 2.0;
                run.sync_seconds *= 2.0;
            }
        }
        vec![("monday.json".into(), real), ("<b>tuesday</b>.json".into(), slower)]
    }

    #[test]
    fn the_page_has_the_ratio_chart_with_error_bars_and_the_terminal_text_escaped() {
        let compared = analysis::compare::compare(&pair());
        let mut page = Vec::new();
        render(&compared, &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(page.contains("id=\"chart-ratio\""), "no ratio chart");
        assert!(page.contains("wb-error-bars") && page.contains("wb-legend") && page.contains("wb-axis-title"));
        assert!(page.contains("throughput ratio to A"));
        assert!(page.contains("&lt;b&gt;tuesday&lt;/b&gt;.json") && !page.contains("<b>tuesday"));
        assert!(page.contains("Content-Security-Policy") && !page.contains("<script"));
        // The figures: every tested case reads 0.500 against the baseline.
        assert!(page.contains("0.500") || page.contains("×0.5"), "no ratio of one half in the text");
    }

    #[test]
    fn the_labs_comparison_has_the_files_side_by_side_and_a_plain_compare_does_not() {
        let files = pair();
        let mut page = Vec::new();
        render(&analysis::compare::across::compare_filesystems(&files), &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(
            page.contains("id=\"chart-side-by-side\"") && page.contains("Across the files"),
            "no side-by-side chart"
        );
        let mut plain = Vec::new();
        render(&analysis::compare::compare(&files), &mut plain).unwrap();
        assert!(!String::from_utf8(plain).unwrap().contains("chart-side-by-side"));
    }

    #[test]
    fn without_a_testable_case_the_page_says_so_instead_of_an_empty_chart() {
        let mut files = pair();
        for (_, result) in &mut files {
            for case in &mut result.cases {
                case.runs.truncate(1);
            }
        }
        let compared = analysis::compare::compare(&files);
        let mut page = Vec::new();
        render(&compared, &mut page).unwrap();
        let page = String::from_utf8(page).unwrap();
        assert!(!page.contains("chart-ratio") && page.contains("No case could be tested"));
    }
}
