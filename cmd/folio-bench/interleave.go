package main

import (
	"fmt"
	"os/exec"
	"slices"
	"time"
)

// Step is one side of an interleaved measurement: a command made fresh
// for every repetition and what runs before it, outside the measurement.
type Step struct {
	Setup func() error // may be nil
	Cmd   func() *exec.Cmd
}

// Spread is what Runs repetitions of a command cost: the median of each
// figure, the range of the wall times and the largest peak RSS.
type Spread struct {
	Measure
	MinWall, MaxWall time.Duration
}

// spreadOf summarizes the runs of one command.
func spreadOf(ms []Measure) Spread {
	s := Spread{Measure: median(ms)}
	walls := make([]time.Duration, len(ms))
	for i, m := range ms {
		walls[i] = m.Wall
		s.MaxRSS = max(s.MaxRSS, m.MaxRSS)
	}
	s.MinWall, s.MaxWall = slices.Min(walls), slices.Max(walls)
	return s
}

// text is "12.3 s (11.9-13.0), cpu 20.1 s, RSS 180 MB".
func (s Spread) text() string {
	return fmt.Sprintf("%s (%s-%s), cpu %s, RSS %s", format(Seconds, s.Wall.Seconds()),
		format(Seconds, s.MinWall.Seconds()), format(Seconds, s.MaxWall.Seconds()),
		format(Seconds, s.CPU.Seconds()), format(Bytes, float64(s.MaxRSS)))
}

// Interleave measures a command and its baseline alternately, A B A B,
// Runs times each, so that whatever else the machine does while they run
// weighs on both alike.
func (b *B) Interleave(a, base Step) (Spread, Spread, error) {
	var as, bs []Measure
	for range max(b.Runs, 1) {
		for _, side := range []struct {
			step Step
			to   *[]Measure
		}{{a, &as}, {base, &bs}} {
			if side.step.Setup != nil {
				if err := side.step.Setup(); err != nil {
					return Spread{}, Spread{}, err
				}
			}
			m, err := b.Run(side.step.Cmd())
			if err != nil {
				return Spread{}, Spread{}, err
			}
			*side.to = append(*side.to, m)
		}
	}
	return spreadOf(as), spreadOf(bs), nil
}

// pairRow is a row of a command measured beside its baseline with
// Interleave: the median wall times, their ranges, CPU and peak RSS.
func pairRow(work string, goal Goal, a, base Spread, baseName string) Row {
	return Row{Work: work, Goal: goal, Value: a.Wall.Seconds(), Baseline: base.Wall.Seconds(), BaselineName: baseName,
		Note: "folio " + a.text() + "; " + baseName + " " + base.text()}
}
