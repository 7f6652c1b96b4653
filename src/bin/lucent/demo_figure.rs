//! The figures of `lucent demo`: image panels (a title, axes in the data's units, a colour bar
//! each) and line plots (axes, units, legends), drawn by plotters into an RGB buffer and encoded
//! as PNG by `image`. Text is DejaVu Sans, embedded in the binary (fonts/LICENSE) and drawn by
//! ab_glyph, so a machine without fonts or fontconfig draws the same figures.

use std::ops::Range;
use std::path::Path;
use std::sync::Once;

use image::{codecs::png::PngEncoder, ExtendedColorType, ImageEncoder};
use lucent::Error;
use ndarray::Array2;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

/// A drawn figure: the PNG, the file it is written to, and what the report says about it.
pub struct Figure {
    pub file: String,
    pub title: String,
    pub caption: String,
    pub png: Vec<u8>,
}

impl Figure {
    /// Writes the PNG into `dir` (atomically, as every output).
    pub fn write(&self, dir: &Path) -> Result<(), Error> {
        lucent::host::write_atomic(&dir.join(&self.file), |w| std::io::Write::write_all(w, &self.png).map_err(Error::Io))
    }
}

/// A panel's files into `dir`: its figures (PNG) and its arrays (.npy, by name); their names, in
/// that order.
pub fn write_all(dir: &Path, figures: &[Figure], arrays: &[(&str, ndarray::ArrayViewD<f32>)]) -> Result<Vec<String>, Error> {
    let mut files = Vec::new();
    for f in figures {
        f.write(dir)?;
        files.push(f.file.clone());
    }
    for (name, x) in arrays {
        lucent::io::write_real(dir.join(name), x)?;
        files.push(name.to_string());
    }
    Ok(files)
}

/// One image of a row: `image` (rows, columns) shown in grey from `range.0` (black) to
/// `range.1` (white), values outside clipped.
pub struct Panel {
    pub title: String,
    pub image: Array2<f32>,
    /// One pixel's height and width in the axes' unit.
    pub pixel: (f64, f64),
    /// The vertical and horizontal axes' labels, with their unit.
    pub axes: (String, String),
    pub range: (f32, f32),
    /// What the colour bar measures, with its unit.
    pub bar: String,
}

impl Panel {
    /// A panel shown from its own finite minimum to maximum.
    pub fn new(title: &str, image: Array2<f32>, pixel: (f64, f64), axes: (&str, &str), bar: &str) -> Panel {
        let finite = image.iter().copied().filter(|v| v.is_finite());
        let range = finite.fold((f32::MAX, f32::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let range = if range.0 < range.1 { range } else { (range.0.min(0.0), range.0.max(0.0) + 1.0) };
        Panel { title: title.into(), image, pixel, axes: (axes.0.into(), axes.1.into()), range, bar: bar.into() }
    }

    /// The same panel shown over `range` (to compare panels on one scale).
    pub fn with_range(self, range: (f32, f32)) -> Panel {
        Panel { range, ..self }
    }

    /// The image's size on the page: its shorter side at least 384 pixels (so a person sees its
    /// pixels), its longer at most 768, the physical aspect kept.
    fn plot_size(&self) -> (u32, u32) {
        let (h, w) = (self.image.nrows() as f64 * self.pixel.0, self.image.ncols() as f64 * self.pixel.1);
        let scale = (MIN_SIDE / h.min(w)).min(2.0 * MIN_SIDE / h.max(w));
        ((w * scale).round() as u32, (h * scale).round() as u32)
    }

    /// The image resampled to `(width, height)` by nearest neighbour (each screen pixel shows the
    /// array element it falls in: no smoothing invented), as RGB bytes.
    fn pixels(&self, (width, height): (u32, u32)) -> Vec<u8> {
        let (h, w) = self.image.dim();
        let mut rgb = Vec::with_capacity(3 * (width * height) as usize);
        for y in 0..height as usize {
            let r = (y * h / height as usize).min(h - 1);
            for x in 0..width as usize {
                let c = (x * w / width as usize).min(w - 1);
                rgb.extend_from_slice(&[grey(self.image[[r, c]], self.range); 3]);
            }
        }
        rgb
    }
}

/// The shorter side of an image panel on the page (pixels).
const MIN_SIDE: f64 = 384.0;
/// Room around a panel's image for its title and axes, and the colour bar's width.
const TITLE: u32 = 40;
const X_AXIS: u32 = 60;
const Y_AXIS: u32 = 80;
const MARGIN: u32 = 12;
const BAR: u32 = 24;
const BAR_AXIS: u32 = 110;

/// The grey level of `v` on `range`: black at the low end, white at the high end.
fn grey(v: f32, (lo, hi): (f32, f32)) -> u8 {
    let t = if v.is_nan() { 0.0 } else { ((v - lo) / (hi - lo)).clamp(0.0, 1.0) };
    (255.0 * t).round() as u8
}

/// Registers the embedded DejaVu Sans as plotters' sans-serif family, once per process.
fn fonts() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        static DEJAVU_SANS: &[u8] = include_bytes!("fonts/DejaVuSans.ttf");
        if plotters::style::register_font("sans-serif", FontStyle::Normal, DEJAVU_SANS).is_err() {
            unreachable!("the embedded DejaVu Sans is a valid TrueType font");
        }
    });
}

/// Draws into a white RGB canvas of `size` and encodes it as PNG.
fn render(file: &str, size: (u32, u32), draw: impl FnOnce(&DrawingArea<BitMapBackend, Shift>) -> Result<(), String>) -> Result<Vec<u8>, Error> {
    fonts();
    let err = |message: String| Error::File { path: file.to_string(), message };
    let mut rgb = vec![255u8; 3 * (size.0 * size.1) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        draw(&root).map_err(|e| err(format!("drawing the figure failed: {e}")))?;
        root.present().map_err(|e| err(format!("drawing the figure failed: {e}")))?;
    }
    let mut png = Vec::new();
    PngEncoder::new(&mut png).write_image(&rgb, size.0, size.1, ExtendedColorType::Rgb8).map_err(|e| err(format!("PNG encoding failed: {e}")))?;
    Ok(png)
}

fn text(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().color(&BLACK)
}

/// Image panels in a grid of `columns`, each with its title, axes and colour bar.
pub fn images(file: &str, title: &str, caption: &str, panels: &[Panel], columns: usize) -> Result<Figure, Error> {
    let sizes: Vec<(u32, u32)> = panels.iter().map(Panel::plot_size).collect();
    // Every cell is as large as the largest panel needs.
    let cell_w = sizes.iter().map(|&(w, _)| Y_AXIS + w + BAR + BAR_AXIS + 3 * MARGIN).max().unwrap_or(1);
    let cell_h = sizes.iter().map(|&(_, h)| TITLE + h + X_AXIS + 2 * MARGIN).max().unwrap_or(1);
    let (columns, rows) = (columns.clamp(1, panels.len().max(1)), panels.len().div_ceil(columns.max(1)).max(1));
    let png = render(file, (cell_w * columns as u32, cell_h * rows as u32), |root| {
        for ((panel, size), cell) in panels.iter().zip(&sizes).zip(root.split_evenly((rows, columns))) {
            image_panel(&cell, panel, size.0).map_err(|e| e.to_string())?;
        }
        Ok(())
    })?;
    Ok(Figure { file: file.into(), title: title.into(), caption: caption.into(), png })
}

/// One panel: the image in a chart whose axes are in the panel's units, its colour bar beside it.
fn image_panel(area: &DrawingArea<BitMapBackend, Shift>, panel: &Panel, w: u32) -> Result<(), Box<dyn std::error::Error>> {
    let (image_area, bar_area) = area.split_horizontally(Y_AXIS + w + 2 * MARGIN);
    let (ph, pw) = (panel.image.nrows() as f64 * panel.pixel.0, panel.image.ncols() as f64 * panel.pixel.1);
    let mut chart = ChartBuilder::on(&image_area)
        .margin(MARGIN)
        .caption(&panel.title, text(22))
        .x_label_area_size(X_AXIS)
        .y_label_area_size(Y_AXIS)
        // Rows run downwards, as the array's first axis does.
        .build_cartesian_2d(0.0..pw, ph..0.0)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(&panel.axes.1)
        .y_desc(&panel.axes.0)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(text(15))
        .axis_desc_style(text(17))
        .draw()?;
    let (cw, chh) = chart.plotting_area().dim_in_pixel();
    chart.plotting_area().draw(&BitMapElement::with_owned_buffer((0.0, 0.0), (cw, chh), panel.pixels((cw, chh))).ok_or("the image's buffer")?)?;

    // The colour bar: a vertical ramp over the panel's range, its axis on the right.
    let (lo, hi) = (panel.range.0 as f64, panel.range.1 as f64);
    let mut bar = ChartBuilder::on(&bar_area)
        .margin(MARGIN)
        .margin_top(MARGIN + TITLE)
        .margin_bottom(MARGIN + X_AXIS)
        .right_y_label_area_size(BAR_AXIS - MARGIN)
        .build_cartesian_2d(0.0..1.0, lo..hi)?;
    bar.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_desc(&panel.bar)
        .y_label_formatter(&|v| tick(*v))
        .label_style(text(15))
        .axis_desc_style(text(17))
        .draw()?;
    let (bw, bh) = bar.plotting_area().dim_in_pixel();
    let ramp: Vec<u8> = (0..bh)
        .flat_map(|y| {
            let v = hi - (hi - lo) * y as f64 / (bh.max(2) - 1) as f64;
            std::iter::repeat_n(grey(v as f32, panel.range), 3 * bw as usize)
        })
        .collect();
    bar.plotting_area().draw(&BitMapElement::with_owned_buffer((0.0, hi), (bw, bh), ramp).ok_or("the colour bar's buffer")?)?;
    Ok(())
}

/// How a series is drawn.
#[derive(Clone, Copy)]
pub enum Mark {
    Line,
    Dots,
}

/// One named series of a plot, in its legend.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub mark: Mark,
    pub colour: RGBColor,
}

/// Colours of the series, in order (Tableau's first four, distinct for colour-blind readers).
pub const COLOURS: [RGBColor; 4] = [RGBColor(31, 119, 180), RGBColor(255, 127, 14), RGBColor(44, 160, 44), RGBColor(214, 39, 40)];

/// One chart: its title, axis labels (with units) and series; a logarithmic vertical axis for
/// measures that fall over decades.
pub struct Plot {
    pub title: String,
    pub x: String,
    pub y: String,
    pub series: Vec<Series>,
    pub log_y: bool,
}

/// Plots stacked vertically, each `size` pixels.
pub fn plots(file: &str, title: &str, caption: &str, plots: &[Plot], size: (u32, u32)) -> Result<Figure, Error> {
    let png = render(file, (size.0, size.1 * plots.len() as u32), |root| {
        for (plot, area) in plots.iter().zip(root.split_evenly((plots.len(), 1))) {
            let points = || plot.series.iter().flat_map(|s| s.points.iter().copied());
            let x = span(points().map(|p| p.0), false, 0);
            let y = span(points().map(|p| p.1), plot.log_y, plot.series.len());
            let drawn = if plot.log_y { chart(&area, plot, x, y.log_scale()) } else { chart(&area, plot, x, y) };
            drawn.map_err(|e| e.to_string())?;
        }
        Ok(())
    })?;
    Ok(Figure { file: file.into(), title: title.into(), caption: caption.into(), png })
}

/// The range a plot's axis shows: the values' span with a margin of 4 % (a factor on a log
/// axis), and on a linear axis room above for a legend of `rows` entries; a span of one value
/// is widened so it is not empty.
fn span(values: impl Iterator<Item = f64>, log: bool, rows: usize) -> Range<f64> {
    let values = values.filter(|v| v.is_finite() && (!log || *v > 0.0));
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return if log { 1.0..10.0 } else { 0.0..1.0 };
    }
    if log {
        let pad = (hi / lo).powf(0.04).max(1.2);
        lo / pad..hi * pad
    } else {
        let width = if hi > lo { hi - lo } else { lo.abs().max(1.0) };
        lo - 0.04 * width..hi + (0.04 + 0.1 * rows as f64) * width
    }
}

/// A tick's label: as few digits as show it (0.5, 12, 1.25), powers of ten beyond 10⁵.
fn tick(v: f64) -> String {
    // A tick at zero on a range about it comes out of plotters' steps as ±1e-16 or so.
    if v.abs() < 1e-12 {
        return "0".into();
    }
    if !(1e-3..1e5).contains(&v.abs()) {
        let s = format!("{v:.1e}");
        return s.replace(".0e", "e");
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// On a log axis only the ticks at 1, 2 and 5 times a power of ten are labelled (the others
/// would overlap).
fn log_tick(v: f64) -> String {
    let mantissa = v / 10f64.powf(v.log10().floor());
    if [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) {
        tick(v)
    } else {
        String::new()
    }
}

/// One chart of `plot` on `area`, the vertical axis `y` linear or logarithmic.
fn chart<Y>(area: &DrawingArea<BitMapBackend, Shift>, plot: &Plot, x: Range<f64>, y: Y) -> Result<(), Box<dyn std::error::Error>>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .caption(&plot.title, text(22))
        .x_label_area_size(X_AXIS)
        .y_label_area_size(Y_AXIS + 10)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .x_desc(&plot.x)
        .y_desc(&plot.y)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(if plot.log_y { &|v| log_tick(*v) } else { &|v| tick(*v) })
        .label_style(text(15))
        .axis_desc_style(text(17))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(225, 225, 225))
        .draw()?;
    for s in &plot.series {
        let colour = s.colour;
        match s.mark {
            Mark::Line => chart
                .draw_series(LineSeries::new(s.points.iter().copied(), colour.stroke_width(2)))?
                .label(&s.name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(2))),
            Mark::Dots => chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, colour.filled())))?
                .label(&s.name)
                .legend(move |(x, y)| Circle::new((x + 12, y), 3, colour.filled())),
        };
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(text(15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}
