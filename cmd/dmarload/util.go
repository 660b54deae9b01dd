package main

import (
	"image/color"
	"os"
)

func createFile(path string) (*os.File, error) { return os.Create(path) }

var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{214, 39, 40, 255}, color.RGBA{44, 160, 44, 255},
}

func colorFor(i int) color.Color { return palette[(i-1)%len(palette)] }
