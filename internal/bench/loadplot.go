package bench

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// newPlot is an empty plot with its title and axis labels.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	return p
}

// drawLoadPlot draws latency percentiles and throughput by concurrency, and
// RSS over time, one above the other, into a PNG.
func drawLoadPlot(path string, lv []loadLevel, rss []rssSample) error {
	lat := newPlot("dmar retrieve: latency by concurrency", "concurrent clients", "ms")
	for i, s := range []struct {
		name string
		get  func(loadLevel) float64
	}{{"p50", func(l loadLevel) float64 { return l.P50 }}, {"p95", func(l loadLevel) float64 { return l.P95 }},
		{"p99", func(l loadLevel) float64 { return l.P99 }}} {
		pts := make(plotter.XYs, len(lv))
		for j, l := range lv {
			pts[j] = plotter.XY{X: float64(l.Concurrency), Y: s.get(l)}
		}
		if err := addLoadLine(lat, s.name, pts, i); err != nil {
			return err
		}
	}
	thr := newPlot("throughput", "concurrent clients", "requests/s")
	pts := make(plotter.XYs, len(lv))
	for i, l := range lv {
		pts[i] = plotter.XY{X: float64(l.Concurrency), Y: l.Throughput}
	}
	if err := addLoadLine(thr, "req/s", pts, 0); err != nil {
		return err
	}
	mem := newPlot("server RSS over time", "s", "MiB")
	mp := make(plotter.XYs, len(rss))
	for i, s := range rss {
		mp[i] = plotter.XY{X: s.At.Seconds(), Y: float64(s.RSS) / (1 << 20)}
	}
	if len(mp) > 0 {
		if err := addLoadLine(mem, "RSS", mp, 0); err != nil {
			return err
		}
	}
	img := vgimg.New(8*vg.Inch, 12*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 3, Cols: 1, PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8), PadY: vg.Points(12)}
	plots := [][]*plot.Plot{{lat}, {thr}, {mem}}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

var loadPalette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{214, 39, 40, 255}, color.RGBA{44, 160, 44, 255},
}

// addLoadLine adds the i-th line of a plot (i picks the colour).
func addLoadLine(p *plot.Plot, name string, pts plotter.XYs, i int) error {
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color = loadPalette[i%len(loadPalette)]
	s.Color = l.Color
	p.Add(l, s)
	p.Legend.Add(name, l)
	return nil
}
