package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// The chart: catch-up throughput (top) and peak RSS (bottom) against N,
// one column per CRD variant, grouped bars per N, drawn with image/png
// and a bitmap font.

var (
	white  = color.RGBA{255, 255, 255, 255}
	black  = color.RGBA{30, 30, 30, 255}
	grid   = color.RGBA{225, 225, 225, 255}
	series = []struct {
		name, label string // name: the contender's; label: in ASCII for the bitmap font
		color       color.RGBA
	}{
		{"ceiling c=16", "ceiling c=16", color.RGBA{150, 150, 150, 255}},
		{kopfName, kopfName, color.RGBA{40, 110, 200, 255}},
		{unboundedName, "kopf-go WorkerLimit=0", color.RGBA{120, 180, 235, 255}},
		{crName, crName, color.RGBA{235, 130, 40, 255}},
	}
)

const (
	panelW, panelH = 520, 300
	marginL        = 70
	marginB        = 40
	marginT        = 40
)

func writeChart(r *Report, path string) error {
	ns, variants := r.axes()
	if len(ns) == 0 || len(variants) == 0 {
		return nil
	}
	legendH := 50
	img := image.NewRGBA(image.Rect(0, 0, panelW*len(variants), panelH*2+legendH))
	draw.Draw(img, img.Bounds(), &image.Uniform{white}, image.Point{}, draw.Src)
	for col, v := range variants {
		x0 := col * panelW
		panel(img, image.Rect(x0, 0, x0+panelW, panelH), "catch-up throughput, objects/s ("+variantTitle[v]+")", ns,
			func(n int, c string) float64 { return r.med(n, v, c, "catchup", perSec) }, "%.0f")
		panel(img, image.Rect(x0, panelH, x0+panelW, 2*panelH), "operator peak RSS, MB ("+variantTitle[v]+")", ns,
			func(n int, c string) float64 {
				if c == series[0].name {
					return 0 // the ceiling is not an operator
				}
				return r.med(n, v, c, "catchup", func(x Result) float64 { return float64(x.PeakRSS) / 1e6 })
			}, "%.0f")
	}
	text(img, 20, 2*panelH+44, "Ratios, not absolute numbers, are the result (a shared 2-core machine): see RESULTS.md.", black)
	lx := 20
	for _, s := range series {
		fill(img, image.Rect(lx, 2*panelH+10, lx+14, 2*panelH+24), s.color)
		text(img, lx+20, 2*panelH+22, s.label, black)
		lx += 40 + 7*len(s.label)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

func panel(img *image.RGBA, rect image.Rectangle, title string, ns []int, value func(n int, c string) float64, format string) {
	text(img, rect.Min.X+marginL, rect.Min.Y+22, title, black)
	plot := image.Rect(rect.Min.X+marginL, rect.Min.Y+marginT, rect.Max.X-20, rect.Max.Y-marginB)
	top := 0.0
	for _, n := range ns {
		for _, s := range series {
			top = math.Max(top, value(n, s.name))
		}
	}
	if top == 0 {
		text(img, plot.Min.X+10, plot.Min.Y+40, "no data", black)
		return
	}
	step := niceStep(top / 4)
	top = math.Ceil(top*1.1/step) * step
	for v := 0.0; v <= top+step/2; v += step {
		y := plot.Max.Y - int(v/top*float64(plot.Dy()))
		fill(img, image.Rect(plot.Min.X, y, plot.Max.X, y+1), grid)
		label := fmt.Sprintf("%g", v)
		text(img, plot.Min.X-8-7*len(label), y+4, label, black)
	}
	fill(img, image.Rect(plot.Min.X, plot.Min.Y, plot.Min.X+1, plot.Max.Y), black)
	fill(img, image.Rect(plot.Min.X, plot.Max.Y, plot.Max.X, plot.Max.Y+1), black)
	groupW := plot.Dx() / len(ns)
	barW := min(60, (groupW-30)/len(series))
	for i, n := range ns {
		gx := plot.Min.X + i*groupW + (groupW-barW*len(series))/2
		for j, s := range series {
			v := value(n, s.name)
			if v == 0 {
				continue
			}
			h := int(v / top * float64(plot.Dy()))
			bx := gx + j*barW
			fill(img, image.Rect(bx+2, plot.Max.Y-h, bx+barW-2, plot.Max.Y), s.color)
			label := fmt.Sprintf(format, v)
			text(img, bx+barW/2-7*len(label)/2, plot.Max.Y-h-4, label, black)
		}
		label := fmt.Sprintf("N = %d", n)
		text(img, plot.Min.X+i*groupW+groupW/2-7*len(label)/2, plot.Max.Y+18, label, black)
	}
}

func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

func text(img *image.RGBA, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
