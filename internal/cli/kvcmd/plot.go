package kvcmd

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotSeries draws the p50 and p99 put latency of a bench's series
// against the keys stored into a PNG file.
func plotSeries(file, title string, pts []seriesPoint) error {
	if len(pts) == 0 {
		return fmt.Errorf("--plot %s: no series to draw (EINVAL)", file)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "keys stored"
	p.Y.Label.Text = "put latency (ms)"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	for _, l := range []struct {
		name  string
		of    func(seriesPoint) float64
		color color.Color
	}{
		{"p99", func(p seriesPoint) float64 { return p.P99Ms }, color.RGBA{R: 200, A: 255}},
		{"p50", func(p seriesPoint) float64 { return p.P50Ms }, color.RGBA{B: 200, A: 255}},
	} {
		xys := make(plotter.XYs, len(pts))
		for i, pt := range pts {
			xys[i].X, xys[i].Y = float64(pt.Keys), l.of(pt)
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("--plot %s: %w", file, err)
		}
		line.Color = l.color
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(l.name, line)
	}
	p.Legend.Top = true
	if err := p.Save(10*vg.Inch, 5*vg.Inch, file); err != nil {
		return fmt.Errorf("--plot %s: %w", file, err)
	}
	return nil
}
