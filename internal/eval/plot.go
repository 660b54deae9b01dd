package eval

import (
	"fmt"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

var plotCaption = map[string]string{
	"recall_at_k.png":     "mean Recall@k for k = 1..k_max, one line per system",
	"latency.png":         "distribution of per-question latency per system (box: quartiles, whiskers: 1.5 IQR; log scale)",
	"ablation_deltas.png": "each system's difference from full DMAR in Recall@5 and nDCG@10 (negative: the removed part helped)",
}

// Plot draws the run's PNG plots into dir and returns their file names.
func Plot(dir string, s *Summary, recs []Record) ([]string, error) {
	var out []string
	if len(s.RecallCurve) > 0 {
		if err := recallPlot(filepath.Join(dir, "recall_at_k.png"), s); err != nil {
			return nil, err
		}
		out = append(out, "recall_at_k.png")
	}
	if err := latencyPlot(filepath.Join(dir, "latency.png"), s, recs); err != nil {
		return nil, err
	}
	out = append(out, "latency.png")
	if ok, err := ablationPlot(filepath.Join(dir, "ablation_deltas.png"), s); err != nil {
		return nil, err
	} else if ok {
		out = append(out, "ablation_deltas.png")
	}
	return out, nil
}

func recallPlot(path string, s *Summary) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Recall@k (%s)", s.Dataset.Format)
	p.X.Label.Text = "k"
	p.Y.Label.Text = "mean recall@k"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	p.Add(plotter.NewGrid())
	for i, sys := range s.Systems {
		c := s.RecallCurve[sys.Name]
		if len(c) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(c))
		for k, v := range c {
			xy[k].X, xy[k].Y = float64(k+1), v
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("recall plot: %w", err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(sys.Name, l)
	}
	return save(p, path, 8, 5)
}

func latencyPlot(path string, s *Summary, recs []Record) error {
	p := plot.New()
	p.Title.Text = "Latency per question"
	p.Y.Label.Text = "ms (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var names []string
	for _, sys := range s.Systems {
		var v plotter.Values
		for _, r := range recs {
			if r.System == sys.Name {
				v = append(v, math.Max(r.LatencyMS, 0.01))
			}
		}
		if len(v) == 0 {
			continue
		}
		b, err := plotter.NewBoxPlot(vg.Points(18), float64(len(names)), v)
		if err != nil {
			return fmt.Errorf("latency plot: %w", err)
		}
		b.FillColor = plotutil.Color(len(names))
		p.Add(b)
		names = append(names, sys.Name)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -0.9, -0.5
	return save(p, path, 9, 5)
}

// ablationPlot draws each other system's difference from full DMAR; false
// when the run has no full DMAR or nothing to compare it with.
func ablationPlot(path string, s *Summary) (bool, error) {
	full, ok := s.Means["dmar"]
	if !ok {
		return false, nil
	}
	metrics := []string{"recall@5", "ndcg@10"}
	var names []string
	vals := make([]plotter.Values, len(metrics))
	for _, sys := range s.Systems {
		if sys.Name == "dmar" {
			continue
		}
		names = append(names, sys.Name)
		for i, m := range metrics {
			vals[i] = append(vals[i], s.Means[sys.Name][m]-full[m])
		}
	}
	if len(names) == 0 {
		return false, nil
	}
	p := plot.New()
	p.Title.Text = "Difference from full DMAR"
	p.Y.Label.Text = "system − dmar"
	p.Add(plotter.NewGrid())
	w := vg.Points(12)
	for i, m := range metrics {
		b, err := plotter.NewBarChart(vals[i], w)
		if err != nil {
			return false, fmt.Errorf("ablation plot: %w", err)
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-0.5) * w
		p.Add(b)
		p.Legend.Add(m, b)
	}
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -0.9, -0.5
	return true, save(p, path, 9, 5)
}

func save(p *plot.Plot, path string, wIn, hIn float64) error {
	if err := p.Save(vg.Length(wIn)*vg.Inch, vg.Length(hIn)*vg.Inch, path); err != nil {
		return fmt.Errorf("plot %s: %w", filepath.Base(path), err)
	}
	return nil
}
