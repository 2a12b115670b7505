package osdmap

import (
	"fmt"
	"math"
	"strconv"
)

// AutoscaleMode is a pool's pg_autoscale_mode: what the monitors'
// autoscaler (internal/autoscale, run by internal/mon/autoscalemon) does
// when the pool's pg_num is far from the one its data calls for. The zero
// value is warn, the mode of pools stored before the autoscaler existed.
type AutoscaleMode uint8

// Autoscale modes, Ceph's names.
const (
	// AutoscaleWarn raises POOL_TOO_FEW_PGS or POOL_TOO_MANY_PGS.
	AutoscaleWarn AutoscaleMode = 0
	// AutoscaleOn makes the monitors' leader set pg_num itself.
	AutoscaleOn AutoscaleMode = 1
	// AutoscaleOff leaves pg_num to the operator; autoscale-status
	// still shows the suggestion.
	AutoscaleOff AutoscaleMode = 2
)

func (m AutoscaleMode) String() string {
	switch m {
	case AutoscaleWarn:
		return "warn"
	case AutoscaleOn:
		return "on"
	case AutoscaleOff:
		return "off"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseAutoscaleMode parses "on", "warn" or "off".
func ParseAutoscaleMode(s string) (AutoscaleMode, error) {
	for _, m := range []AutoscaleMode{AutoscaleWarn, AutoscaleOn, AutoscaleOff} {
		if s == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("osdmap: pg_autoscale_mode %q is not on, warn or off", s)
}

// MaxAutoscaleBias bounds pg_autoscale_bias, as Ceph does.
const MaxAutoscaleBias = 1000

// DefaultAutoscaleBias is the bias of a pool that sets none.
const DefaultAutoscaleBias = 1.0

// Bias returns the pool's pg_autoscale_bias: the factor its ideal PG
// count is multiplied by (metadata pools, whose objects are small and
// many, use 4 in Ceph). AutoscaleBias 0 means the default, 1.
func (p *Pool) Bias() float64 {
	if p.AutoscaleBias == 0 {
		return DefaultAutoscaleBias
	}
	return p.AutoscaleBias
}

// SetBias sets pg_autoscale_bias, storing the default as 0 (the
// canonical form Equal and the codec rely on).
func (p *Pool) SetBias(b float64) {
	p.AutoscaleBias = b
	if b == DefaultAutoscaleBias {
		p.AutoscaleBias = 0
	}
}

// autoscaleString is the part of String for the autoscaler's settings
// that differ from the defaults.
func (p *Pool) autoscaleString() string {
	var s string
	if p.AutoscaleMode != AutoscaleWarn {
		s += " autoscale_mode " + p.AutoscaleMode.String()
	}
	if p.TargetSizeBytes != 0 {
		s += fmt.Sprintf(" target_size_bytes %d", p.TargetSizeBytes)
	}
	if p.TargetSizeRatio != 0 {
		s += " target_size_ratio " + strconv.FormatFloat(p.TargetSizeRatio, 'g', -1, 64)
	}
	if p.AutoscaleBias != 0 {
		s += " pg_autoscale_bias " + strconv.FormatFloat(p.AutoscaleBias, 'g', -1, 64)
	}
	return s
}

// validateAutoscale checks the autoscaler's settings.
func (p *Pool) validateAutoscale() error {
	switch {
	case p.AutoscaleMode > AutoscaleOff:
		return fmt.Errorf("pool %d: unknown pg_autoscale_mode %d", p.ID, p.AutoscaleMode)
	case math.IsNaN(p.TargetSizeRatio) || p.TargetSizeRatio < 0 || math.IsInf(p.TargetSizeRatio, 0):
		return fmt.Errorf("pool %d: target_size_ratio %v is not a finite number at least 0", p.ID, p.TargetSizeRatio)
	case math.IsNaN(p.AutoscaleBias) || p.AutoscaleBias < 0 || p.AutoscaleBias > MaxAutoscaleBias:
		return fmt.Errorf("pool %d: pg_autoscale_bias %v out of [0, %d] (0 is the default, 1)", p.ID, p.AutoscaleBias, MaxAutoscaleBias)
	}
	return nil
}
