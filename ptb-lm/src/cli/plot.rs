//! `ptb-lm plot`: train and valid perplexity per epoch (log scale) from metrics files, with the
//! TensorFlow tutorial's final numbers as reference marks.

use crate::config::ranges::UsageError;
use anyhow::{bail, Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// metrics.jsonl files written by `ptb-lm train` (runs/NAME/metrics.jsonl); each curve is
    /// labelled by its run's folder
    #[arg(long, num_args = 1.., required = true)]
    pub metrics: Vec<PathBuf>,
    /// The picture: a file ending in .svg or .png
    #[arg(long)]
    pub out: PathBuf,
}

/// The tutorial's final (epochs, train, valid) perplexities for small, medium and large.
const TUTORIAL: [(&str, usize, f64, f64); 3] = [
    ("small", 13, 37.99, 121.39),
    ("medium", 39, 48.45, 86.16),
    ("large", 55, 37.87, 82.62),
];

struct Curve {
    name: String,
    /// (epoch, train, valid)
    points: Vec<(usize, f64, f64)>,
}

fn read_curve(path: &Path) -> Result<Curve> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut points = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{}: not JSON lines", path.display()))?;
        if let (Some(e), Some(t), Some(va)) = (
            v["epoch"].as_u64(),
            v["train_perplexity"].as_f64(),
            v["valid_perplexity"].as_f64(),
        ) {
            points.push((e as usize, t, va));
        }
    }
    if points.is_empty() {
        bail!("{} has no epoch lines", path.display());
    }
    Ok(Curve {
        name: String::new(),
        points,
    })
}

/// The words that tell a metrics file from the others: its run folder's name (`large` for
/// `runs/large/metrics.jsonl`), or its own name without `.metrics.jsonl` (`large-seed3` for
/// `results/large-seed3.metrics.jsonl`), with as many parent folders as it takes to make
/// every label unique.
fn labels(paths: &[PathBuf]) -> Vec<String> {
    let parts: Vec<Vec<String>> = paths
        .iter()
        .map(|p| {
            let mut parts: Vec<String> = p
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if let Some(last) = parts.pop() {
                let stem = last.replace(".metrics.jsonl", "").replace(".jsonl", "");
                if stem != "metrics" {
                    parts.push(stem);
                }
            }
            parts
        })
        .collect();
    let label = |p: &Vec<String>, n: usize| p[p.len().saturating_sub(n)..].join("/");
    let longest = parts.iter().map(Vec::len).max().unwrap_or(1);
    for n in 1..longest {
        let names: Vec<String> = parts.iter().map(|p| label(p, n)).collect();
        let unique: std::collections::HashSet<&String> = names.iter().collect();
        if unique.len() == names.len() {
            return names;
        }
    }
    parts.iter().map(|p| label(p, longest)).collect()
}

/// The perplexities to label on a log axis from `lo` to `hi`: the roundest numbers of which at
/// least four lie inside it (1, 2 and 5 per decade; else every mantissa; else in steps of a
/// quarter, then a tenth, of the decade's first).
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let decades = lo.log10().floor() as i32..=hi.log10().ceil() as i32;
    // Mantissas in hundredths, scaled by exact powers of ten, so that 130 prints as 130.
    let within = |hundredths: Vec<u32>| -> Vec<f64> {
        decades
            .clone()
            .flat_map(|d| {
                hundredths.iter().map(move |&m| match d {
                    d if d >= 2 => m as f64 * 10f64.powi(d - 2),
                    d => m as f64 / 10f64.powi(2 - d),
                })
            })
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let levels = [
        vec![100, 200, 500],
        vec![100, 150, 200, 300, 400, 500, 600, 700, 800, 900],
        (100..1000).step_by(25).collect(),
        (100..1000).step_by(10).collect(),
    ];
    let mut last = Vec::new();
    for hundredths in levels {
        last = within(hundredths);
        if last.len() >= 4 {
            break;
        }
    }
    last
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, curves: &[Curve]) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let max_epoch = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .max()
        .unwrap_or(1);
    let all = curves
        .iter()
        .flat_map(|c| c.points.iter().flat_map(|p| [p.1, p.2]));
    let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Every epoch in view: the first epochs sit far above the last (log axis). A span of at
    // least 1.5x keeps several labelled ticks on the axis when the curves are short and flat
    // (a one-epoch run).
    let widen = (1.5 / (hi / lo)).max(1.0).sqrt();
    let (lo, hi) = (lo * 0.9 / widen, hi * 1.1 * widen);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "PTB word-level LSTM: perplexity per epoch",
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            0usize..max_epoch + 1,
            (lo..hi).log_scale().with_key_points(ticks(lo, hi)),
        )?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("perplexity (log scale)")
        .y_label_formatter(&|v| format!("{v}"))
        .draw()?;
    let palette = [
        BLUE,
        RED,
        GREEN,
        MAGENTA,
        CYAN,
        BLACK,
        RGBColor(230, 140, 0),
        RGBColor(120, 60, 20),
    ];
    for (i, c) in curves.iter().enumerate() {
        let color = palette[i % palette.len()];
        // A dot per epoch: a curve of one epoch is a point, which a line alone never draws.
        let dots = |valid: bool, style: ShapeStyle| {
            c.points
                .iter()
                .map(move |p| Circle::new((p.0, if valid { p.2 } else { p.1 }), 3, style))
        };
        chart.draw_series(dots(false, color.filled()))?;
        chart.draw_series(dots(true, color.mix(0.5).filled()))?;
        chart
            .draw_series(LineSeries::new(
                c.points.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            ))?
            .label(format!("{} train", c.name))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart
            .draw_series(LineSeries::new(
                c.points.iter().map(|p| (p.0, p.2)),
                color.mix(0.5).stroke_width(2),
            ))?
            .label(format!("{} valid", c.name))
            .legend(move |(x, y)| {
                PathElement::new([(x, y), (x + 20, y)], color.mix(0.5).stroke_width(2))
            });
    }
    // The tutorial's marks for the configurations whose epoch count some curve reached.
    let lengths: Vec<usize> = curves
        .iter()
        .filter_map(|c| c.points.last().map(|p| p.0))
        .collect();
    let marks: Vec<_> = TUTORIAL.iter().filter(|t| lengths.contains(&t.1)).collect();
    chart
        .draw_series(
            marks
                .iter()
                .flat_map(|t| [(t.1, t.2), (t.1, t.3)])
                .map(|p| Cross::new(p, 7, BLACK.stroke_width(2))),
        )?
        .label("TF tutorial final train / valid")
        .legend(|(x, y)| Cross::new((x + 10, y), 5, BLACK.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Where a sans-serif TrueType font usually is; plotters draws text with the first found.
const FONTS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/Library/Fonts/Arial Unicode.ttf",
];

fn register_font() -> Result<()> {
    let found = std::env::var("PTB_LM_FONT")
        .ok()
        .into_iter()
        .chain(FONTS.iter().map(|s| s.to_string()));
    for path in found {
        if let Ok(bytes) = std::fs::read(&path) {
            // plotters keeps fonts for the life of the process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return Ok(());
            }
        }
    }
    bail!("no TrueType font found to draw text (tried {FONTS:?}); set PTB_LM_FONT to a .ttf file")
}

pub fn plot(args: PlotArgs) -> Result<()> {
    let format = args.out.extension().and_then(|e| e.to_str());
    if !matches!(format, Some("svg" | "png")) {
        let e = format!("--out must end in .svg or .png, got {}", args.out.display());
        return Err(UsageError(e).into());
    }
    register_font()?;
    let mut curves = args
        .metrics
        .iter()
        .map(|p| read_curve(p))
        .collect::<Result<Vec<_>>>()?;
    for (c, name) in curves.iter_mut().zip(labels(&args.metrics)) {
        c.name = name;
    }
    let size = (900, 560);
    let drawn = match format {
        Some("svg") => draw(
            SVGBackend::new(&args.out, size).into_drawing_area(),
            &curves,
        ),
        _ => draw(
            BitMapBackend::new(&args.out, size).into_drawing_area(),
            &curves,
        ),
    };
    drawn.with_context(|| format!("drawing {}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_flat_curve_still_gets_labelled_ticks() {
        for (lo, hi) in [(156.0, 286.0), (40.0, 1500.0), (99.0, 150.0), (3.1, 4.8)] {
            let t = ticks(lo, hi);
            assert!(t.len() >= 4 && t.len() <= 30, "{lo}..{hi}: {t:?}");
            assert!(t.iter().all(|v| (lo..=hi).contains(v)), "{t:?}");
        }
        assert_eq!(ticks(40.0, 1500.0), [50.0, 100.0, 200.0, 500.0, 1000.0]);
        assert_eq!(ticks(156.0, 286.0), [175.0, 200.0, 225.0, 250.0, 275.0]);
    }

    #[test]
    fn curves_are_labelled_by_run() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            labels(&[p("runs/large/metrics.jsonl"), p("runs/small/metrics.jsonl")]),
            ["large", "small"]
        );
        assert_eq!(
            labels(&[p("a/large/metrics.jsonl"), p("b/large/metrics.jsonl")]),
            ["a/large", "b/large"]
        );
        assert_eq!(
            labels(&[p("results/seed3.metrics.jsonl"), p("x.jsonl")]),
            ["seed3", "x"]
        );
    }
}
