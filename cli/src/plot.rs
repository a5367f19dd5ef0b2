//! The plots of `run --plot`, `batch --plot` and the experiments: lines of errors (against generations or evaluations) on a
//! logarithmic y axis, each line with an optional shaded band, written as PNG and SVG.
//!
//! Text is set in the DejaVu Sans font that the `dejavu` crate embeds, registered as the
//! plots' `sans-serif`: no system fonts are read, so a plot looks the same everywhere.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

/// Colours of the lines, in order (repeated after the tenth).
pub const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
/// Width and height in pixels.
const SIZE: (u32, u32) = (1000, 640);
const FONT: &str = "sans-serif";

/// One line of a chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Line {
    /// Its name in the legend.
    pub label: String,
    /// (x, y), y inside the chart's y axis.
    pub points: Vec<(f64, f64)>,
    /// (x, low, high) of a band shaded around the line in its colour; empty for none.
    pub band: Vec<(f64, f64, f64)>,
}

/// The corner the legend sits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corner {
    UpperRight,
    LowerLeft,
}

/// A logarithmic y axis over the decades 10^lo … 10^hi. Its bottom line may stand for
/// more than 10^lo (every value ≤ 0, or every value below a floor): it is then labelled
/// `bottom_label` instead of `1e<lo>`.
#[derive(Clone, Debug, PartialEq)]
pub struct LogAxis {
    pub lo: i32,
    pub hi: i32,
    pub bottom_label: Option<&'static str>,
}

impl LogAxis {
    /// The decades that hold the positive finite `values` (NaN left out; 10^-2 … 10^0
    /// when there are none). When some value is ≤ 0, which a log scale cannot show, the
    /// axis reaches two decades below the smallest positive value and its bottom line,
    /// labelled 0, stands for those values.
    pub fn of(values: impl Iterator<Item = f64>) -> LogAxis {
        let (mut min, mut max, mut zero) = (f64::INFINITY, 0.0f64, false);
        for v in values.filter(|v| !v.is_nan()) {
            if v <= 0.0 {
                zero = true;
            } else if v.is_finite() {
                min = min.min(v);
                max = max.max(v);
            }
        }
        let bottom_label = zero.then_some("0");
        if !min.is_finite() {
            return LogAxis {
                lo: -2,
                hi: 0,
                bottom_label,
            };
        }
        let lo = min.log10().floor() as i32 - if zero { 2 } else { 0 };
        let hi = (max.log10().ceil() as i32).max(lo + 1);
        LogAxis {
            lo,
            hi,
            bottom_label,
        }
    }

    /// The axis cut at 10^`floor` (values below it are drawn there by the caller): the
    /// bottom line is labelled `label` when it is that floor.
    pub fn floored(self, floor: i32, label: &'static str) -> LogAxis {
        let lo = self.lo.max(floor);
        LogAxis {
            lo,
            hi: self.hi.max(lo + 1),
            bottom_label: if lo == floor {
                Some(label)
            } else {
                self.bottom_label
            },
        }
    }

    /// The value of the bottom line.
    pub fn bottom(&self) -> f64 {
        10f64.powi(self.lo)
    }

    fn top(&self) -> f64 {
        10f64.powi(self.hi)
    }

    /// Labelled decades (at most about a dozen, the bottom one always) and every decade.
    fn ticks(&self) -> (Vec<f64>, Vec<f64>) {
        let step = ((self.hi - self.lo + 10) / 11).max(1) as usize;
        let bold = (self.lo..=self.hi)
            .step_by(step)
            .map(|e| 10f64.powi(e))
            .collect();
        let light = (self.lo..=self.hi).map(|e| 10f64.powi(e)).collect();
        (bold, light)
    }

    fn label(&self, v: f64) -> String {
        let e = v.log10().round() as i32;
        match self.bottom_label {
            Some(l) if e == self.lo => l.into(),
            _ => format!("1e{e}"),
        }
    }
}

/// A chart: lines over x from 0 to `x_max` on a logarithmic y axis.
#[derive(Clone, Debug)]
pub struct Chart<'a> {
    pub title: String,
    pub x_desc: &'a str,
    pub x_max: f64,
    pub y_desc: &'a str,
    pub y: LogAxis,
    pub legend: Corner,
    pub lines: Vec<Line>,
}

impl Chart<'_> {
    /// Writes the chart as PNG into `path`, whole or not at all.
    pub fn png(&self, path: &Path) -> io::Result<()> {
        register_font()?;
        // The bitmap backend writes the file itself (in the format its extension names):
        // into a temporary file, renamed once complete.
        crate::output::write_with(path, |tmp| {
            self.draw(BitMapBackend::new(tmp, SIZE).into_drawing_area())
                .map_err(drawing)
        })
    }

    /// Writes the chart as SVG into `path`, whole or not at all.
    pub fn svg(&self, path: &Path) -> io::Result<()> {
        register_font()?;
        let mut text = String::new();
        self.draw(SVGBackend::with_string(&mut text, SIZE).into_drawing_area())
            .map_err(drawing)?;
        crate::output::write(path, text.as_bytes())
    }

    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        area.fill(&WHITE).map_err(err)?;
        let (bold, light) = self.y.ticks();
        let y = (self.y.bottom()..self.y.top())
            .log_scale()
            .with_key_points(bold)
            .with_light_points(light);
        let mut chart = ChartBuilder::on(&area)
            .caption(&self.title, (FONT, 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(78)
            .build_cartesian_2d(0f64..self.x_max.max(1.0), y)
            .map_err(err)?;
        let x_label = |v: &f64| {
            if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v}")
            }
        };
        let y_label = |v: &f64| self.y.label(*v);
        chart
            .configure_mesh()
            .x_desc(self.x_desc)
            .y_desc(self.y_desc)
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(err)?;
        for (k, line) in self.lines.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            if !line.band.is_empty() {
                let band: Vec<(f64, f64)> = line
                    .band
                    .iter()
                    .map(|b| (b.0, b.2))
                    .chain(line.band.iter().rev().map(|b| (b.0, b.1)))
                    .collect();
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(0.18).filled(),
                    )))
                    .map_err(err)?;
            }
            chart
                .draw_series(LineSeries::new(
                    line.points.iter().copied(),
                    color.stroke_width(2),
                ))
                .map_err(err)?
                .label(line.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
                });
        }
        chart
            .configure_series_labels()
            .position(match self.legend {
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
            })
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font((FONT, 14))
            .draw()
            .map_err(err)?;
        area.present().map_err(err)?;
        Ok(())
    }
}

fn drawing(message: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("drawing a plot: {message}"))
}

/// Registers the embedded DejaVu Sans as the plots' `sans-serif`, once.
fn register_font() -> io::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(drawing("the embedded font cannot be read"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_errors_get_the_bottom_line() {
        let a = LogAxis::of([1e3, 2e-8, 0.0, f64::NAN].into_iter());
        assert_eq!((a.lo, a.hi, a.bottom_label), (-10, 3, Some("0")));
        assert_eq!(a.label(a.bottom()), "0");
        assert_eq!(a.label(1e-5), "1e-5");
        let (bold, light) = a.ticks();
        assert_eq!(bold[0], a.bottom());
        assert!(bold.len() <= 12);
        assert_eq!(light.len(), 14);
        let b = LogAxis::of([5.0, 0.5].into_iter());
        assert_eq!((b.lo, b.hi, b.bottom_label), (-1, 1, None));
        assert_eq!(b.label(b.bottom()), "1e-1");
    }

    #[test]
    fn a_floor_cuts_the_axis_and_names_its_bottom() {
        let a = LogAxis::of([1e-8, 3e2].into_iter()).floored(-8, "≤ 1e-8");
        assert_eq!((a.lo, a.hi), (-8, 3));
        assert_eq!(a.label(a.bottom()), "≤ 1e-8");
        assert_eq!(a.label(1e-7), "1e-7");
        let b = LogAxis::of([2e-3, 5e-3].into_iter()).floored(-8, "≤ 1e-8");
        assert_eq!((b.lo, b.hi, b.bottom_label), (-3, -2, None));
        let c = LogAxis::of([1e-8].into_iter()).floored(-8, "≤ 1e-8");
        assert_eq!((c.lo, c.hi), (-8, -7));
    }
}
