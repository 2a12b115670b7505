package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestServe(t *testing.T) {
	reg := NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuttle_test_total", Help: "test"}, []string{"reason"})
	reg.MustRegister(c)
	c.WithLabelValues("bad proof").Add(2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, "127.0.0.1:0", reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `cuttle_test_total{reason="bad proof"} 2`) || !strings.Contains(string(body), "go_goroutines") {
		t.Fatalf("metrics page:\n%s", body)
	}
}
