//! A loss-curve plot as a self-contained SVG (opens in any browser): one
//! panel per series, x = samples trained.

use std::fmt::Write;

/// One curve: name and (x, y) points.
pub struct Series {
    /// Legend name.
    pub name: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
}

/// Renders the series as stacked panels.
pub fn svg(title: &str, series: &[Series]) -> String {
    let (w, ph, m) = (720.0, 160.0, 50.0);
    let height = 40.0 + series.len() as f64 * (ph + 30.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/><text x="{m}" y="22" font-size="14">{title}</text>"#
    );
    let colors = [
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
    ];
    for (i, se) in series.iter().enumerate() {
        let top = 40.0 + i as f64 * (ph + 30.0);
        let pts: Vec<(f64, f64)> = se
            .points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        let _ = write!(
            s,
            r##"<rect x="{m}" y="{top}" width="{}" height="{ph}" fill="none" stroke="#888"/><text x="{}" y="{}">{}</text>"##,
            w - 2.0 * m,
            m + 5.0,
            top + 14.0,
            se.name
        );
        if pts.is_empty() {
            continue;
        }
        let (xmin, xmax) = pts
            .iter()
            .fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.0), a.1.max(p.0)));
        let (ymin, ymax) = pts
            .iter()
            .fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.1), a.1.max(p.1)));
        let xr = (xmax - xmin).max(1e-12);
        let yr = (ymax - ymin).max(1e-12);
        let sx = |x: f64| m + (x - xmin) / xr * (w - 2.0 * m);
        let sy = |y: f64| top + ph - (y - ymin) / yr * ph;
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = write!(
            s,
            r##"<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/><text x="4" y="{}">{:.4}</text><text x="4" y="{}">{:.4}</text><text x="{m}" y="{}">{:.0}</text><text x="{}" y="{}" text-anchor="end">{:.0} samples</text>"##,
            colors[i % colors.len()],
            path.join(" "),
            top + 10.0,
            ymax,
            top + ph,
            ymin,
            top + ph + 14.0,
            xmin,
            w - m,
            top + ph + 14.0,
            xmax
        );
    }
    s.push_str("</svg>\n");
    s
}
