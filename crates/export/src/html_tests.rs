use super::*;
use crate::charts::tests::{measured, result};
use plan::{FileState, Layout};
use result::{Comparison, Figure, Observation, Recommendation};

fn page(result: &ResultFile) -> String {
    let mut out = Vec::new();
    render(result, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn sample() -> ResultFile {
    let t = &[1.0, 1.1, 0.9];
    result(vec![
        measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
        measured("write", FileState::Empty, 1 << 20, "none", 1, Layout::OneFile, t),
        measured("pwrite", FileState::Prealloc, 1 << 20, "end", 1, Layout::OneFile, t),
    ])
}

#[test]
fn sections_in_order_answer_first() {
    let html = page(&sample());
    let at = |id: &str| html.find(&format!("<section id=\"{id}\">")).unwrap_or_else(|| panic!("{id}"));
    let order = ["answer", "charts", "observations", "table", "context"].map(at);
    assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{order:?}");
    assert!(html.contains("<svg class=\"wb-chart\" id=\"chart-chunks-empty\""));
    assert!(html.contains("None: this result holds no recommendation"));
    assert!(html.contains("None: this result holds no observation"));
    for case in &sample().cases {
        assert!(html.contains(&format!("<td>{}</td>", case.case.id)), "{}", case.case.id);
    }
    assert!(html.contains("<td>— (never synced)</td>"), "no durable figure without a sync");
}

#[test]
fn self_contained_printable_light_and_dark() {
    let html = page(&sample());
    assert!(html.contains("@media print"));
    assert!(html.contains("prefers-color-scheme: dark"));
    assert!(html.contains("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'"));
    for fetches in ["<script", "src=", "@import", "url(", "<link rel=\"stylesheet\""] {
        assert!(!html.contains(fetches), "{fetches}");
    }
    // The only addresses are the SVG namespace (a name, never fetched).
    let addresses = html.matches("http://").count() + html.matches("https://").count();
    assert_eq!(addresses, html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count());
    let links: Vec<&str> = html.match_indices("href=").map(|(at, _)| &html[at..at + 14]).collect();
    assert_eq!(links, vec!["href=\"data:,\">"], "only the empty icon, so that no favicon is asked for");
}

#[test]
fn text_from_the_result_is_escaped_everywhere() {
    let mut result = sample();
    let hostile = "<img src=x onerror=alert(1)> & \"quoted\"";
    result.target.path = hostile.into();
    result.host.cpu_model = hostile.into();
    result.cases[0].case.id = hostile.into();
    result.cases[1].status = Status::Failed;
    result.cases[1].error = Some(hostile.into());
    result.options.argv = Some(vec!["writebench".into(), hostile.into()]);
    let figure = Figure {
        case: hostile.into(),
        metric: "throughput".into(),
        median: 1e9,
        mean: 1e9,
        ci95_low: Some(0.9e9),
        ci95_high: Some(1.1e9),
    };
    let comparison = Comparison {
        better: hostile.into(),
        baseline: "write".into(),
        factor: 1.5,
        low: 1.2,
        high: 1.9,
        p_value: 0.01,
        significant: true,
    };
    result.observations = vec![Observation {
        kind: "state".into(),
        text: hostile.into(),
        figures: vec![figure.clone()],
        comparison: Some(comparison.clone()),
        numbers: Default::default(),
    }];
    result.answer = vec![Recommendation {
        goal: hostile.into(),
        text: hostile.into(),
        best: figure,
        runner_up: Some(comparison),
        naive: None,
        tied: true,
        verdict: None,
        fastest: None,
        crash_checked: None,
        glance: None,
    }];
    let html = page(&result);
    assert!(!html.contains("<img"), "{html}");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt; &amp;"), "{html}");
    assert!(html.contains("against the runner-up: &lt;img"), "{html}");
    assert!(html.contains("<span class=\"tied\">tied</span>"));
    assert!(html.contains("1.50 times (95 % CI 1.20 to 1.90), p = 0.010, significant"), "{html}");
}
