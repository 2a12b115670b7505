package s3gw

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// lcAll is a configuration with every element S3 defines
// (PutBucketLifecycleConfiguration's LifecycleRule).
const lcAll = `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
 <Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>3</Days></Expiration></Rule>
 <Rule><ID>tmp-big</ID><Filter><And><Prefix>tmp/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><Tag><Key>j</Key><Value></Value></Tag>
   <ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>1000</ObjectSizeLessThan></And></Filter><Status>Disabled</Status>
   <Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration><Transition><Date>2029-01-01T00:00:00.000Z</Date><StorageClass>GLACIER</StorageClass></Transition></Rule>
 <Rule><ID>old</ID><Prefix>old/</Prefix><Status>Enabled</Status>
   <NoncurrentVersionExpiration><NoncurrentDays>5</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>
   <NoncurrentVersionTransition><NoncurrentDays>1</NoncurrentDays><StorageClass>STANDARD_IA</StorageClass><NewerNoncurrentVersions>3</NewerNoncurrentVersions></NoncurrentVersionTransition>
   <AbortIncompleteMultipartUpload><DaysAfterInitiation>7</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>
 <Rule><ID>markers</ID><Filter></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
 <Rule><ID>tagged</ID><Filter><Tag><Key>t</Key><Value>1</Value></Tag></Filter><Status>Enabled</Status><Transition><Days>30</Days><StorageClass>DEEP_ARCHIVE</StorageClass></Transition></Rule>
 <Rule><ID>small</ID><Filter><ObjectSizeLessThan>100</ObjectSizeLessThan></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>
 <Rule><ID>large</ID><Filter><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan></Filter><Status>Disabled</Status><Expiration><Days>1</Days></Expiration></Rule>
</LifecycleConfiguration>`

func parseLC(t *testing.T, doc string) []meta.LifecycleRule {
	t.Helper()
	var c lifecycleConfiguration
	if err := xml.Unmarshal([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	rules, err := checkLifecycle(c)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return rules
}

// PutBucketLifecycleConfiguration, GetBucketLifecycleConfiguration and
// DeleteBucketLifecycle (S3 API reference): every element kept and
// answered as given, NoSuchLifecycleConfiguration without one, the
// owner's only unless the policy allows s3:GetLifecycleConfiguration /
// s3:PutLifecycleConfiguration.
func TestLifecycleConfiguration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lcconf"})
		e.want(e.do(req{method: "GET", target: "/lcconf?lifecycle"}), 404, "NoSuchLifecycleConfiguration")
		e.ok(req{method: "PUT", target: "/lcconf?lifecycle", body: []byte(lcAll)})
		w := e.ok(req{method: "GET", target: "/lcconf?lifecycle"})
		if got, want := parseLC(t, w.Body.String()), parseLC(t, lcAll); !reflect.DeepEqual(got, want) {
			t.Fatalf("answered:\n%+v\nput:\n%+v\n%s", got, want, w.Body.String())
		}
		for _, frag := range []string{"<Prefix>old/</Prefix><Status>Enabled</Status>", "<Filter></Filter>", "<And><Prefix>tmp/</Prefix>",
			"<Date>2030-01-01T00:00:00.000Z</Date>", "<ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker>"} {
			if !strings.Contains(w.Body.String(), frag) {
				t.Errorf("GetBucketLifecycleConfiguration has no %q: %s", frag, w.Body.String())
			}
		}
		// A rule without an ID gets one.
		e.ok(req{method: "PUT", target: "/lcconf?lifecycle", body: []byte(`<LifecycleConfiguration><Rule><Filter><Prefix>a</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)})
		if got := decode[lifecycleConfiguration](t, e.ok(req{method: "GET", target: "/lcconf?lifecycle"})); len(got.Rules) != 1 || got.Rules[0].ID == nil || *got.Rules[0].ID == "" {
			t.Fatalf("a rule without ID: %+v", got)
		}
		// Only the owner.
		e.want(e.do(req{method: "GET", target: "/lcconf?lifecycle", creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "PUT", target: "/lcconf?lifecycle", creds: &e.bob, body: []byte(lcAll)}), 403, "AccessDenied")
		e.want(e.do(req{method: "DELETE", target: "/lcconf?lifecycle", anonymous: true}), 403, "AccessDenied")
		pol := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"bob"},"Action":["s3:GetLifecycleConfiguration"],"Resource":"arn:aws:s3:::lcconf"}]}`
		e.ok(req{method: "PUT", target: "/lcconf?policy", body: []byte(pol)})
		e.ok(req{method: "GET", target: "/lcconf?lifecycle", creds: &e.bob})
		e.want(e.do(req{method: "DELETE", target: "/lcconf?lifecycle", creds: &e.bob}), 403, "AccessDenied")
		e.want(e.do(req{method: "POST", target: "/lcconf?lifecycle"}), 405, "MethodNotAllowed")
		e.want(e.do(req{method: "GET", target: "/nolcbucket?lifecycle"}), 404, "NoSuchBucket")

		e.ok(req{method: "DELETE", target: "/lcconf?lifecycle"})
		e.want(e.do(req{method: "GET", target: "/lcconf?lifecycle"}), 404, "NoSuchLifecycleConfiguration")
		e.ok(req{method: "DELETE", target: "/lcconf?lifecycle"}) // none: still 204
	})
}

// Every refusal of PutBucketLifecycleConfiguration, with S3's code; a
// refused configuration leaves the one before.
func TestLifecycleRefusals(t *testing.T) {
	rule := func(inner string) string {
		return `<LifecycleConfiguration><Rule>` + inner + `</Rule></LifecycleConfiguration>`
	}
	exp := `<Expiration><Days>1</Days></Expiration>`
	on := `<Filter></Filter><Status>Enabled</Status>`
	var many strings.Builder
	many.WriteString("<LifecycleConfiguration>")
	for i := range 1001 {
		fmt.Fprintf(&many, "<Rule><ID>r%d</ID>%s%s</Rule>", i, on, exp)
	}
	many.WriteString("</LifecycleConfiguration>")
	cases := []struct{ name, doc, code string }{
		{"not XML", "<LifecycleConfiguration><Rule>", "MalformedXML"},
		{"another root", `<Lifecycle><Rule>` + on + exp + `</Rule></Lifecycle>`, "MalformedXML"},
		{"no rule", `<LifecycleConfiguration></LifecycleConfiguration>`, "MalformedXML"},
		{"1,001 rules", many.String(), "MalformedXML"},
		{"bad status", rule(`<Filter></Filter><Status>On</Status>` + exp), "MalformedXML"},
		{"no status", rule(`<Filter></Filter>` + exp), "MalformedXML"},
		{"filter and prefix", rule(`<Filter></Filter><Prefix>a</Prefix><Status>Enabled</Status>` + exp), "MalformedXML"},
		{"neither filter nor prefix", rule(`<Status>Enabled</Status>` + exp), "MalformedXML"},
		{"two filter conditions", rule(`<Filter><Prefix>a</Prefix><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter><Status>Enabled</Status>` + exp), "MalformedXML"},
		{"no action", rule(on), "InvalidRequest"},
		{"days 0", rule(on + `<Expiration><Days>0</Days></Expiration>`), "InvalidArgument"},
		{"days negative", rule(on + `<Expiration><Days>-3</Days></Expiration>`), "InvalidArgument"},
		{"days not a number", rule(on + `<Expiration><Days>ten</Days></Expiration>`), "MalformedXML"},
		{"days and date", rule(on + `<Expiration><Days>1</Days><Date>2030-01-01T00:00:00Z</Date></Expiration>`), "MalformedXML"},
		{"empty expiration", rule(on + `<Expiration></Expiration>`), "MalformedXML"},
		{"date not midnight", rule(on + `<Expiration><Date>2030-01-01T10:00:00Z</Date></Expiration>`), "InvalidArgument"},
		{"date not a date", rule(on + `<Expiration><Date>soon</Date></Expiration>`), "MalformedXML"},
		{"marker flag not boolean", rule(on + `<Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker></Expiration>`), "MalformedXML"},
		{"ID of 256", rule(`<ID>` + strings.Repeat("x", 256) + `</ID>` + on + exp), "InvalidArgument"},
		{"same ID twice", `<LifecycleConfiguration><Rule><ID>a</ID>` + on + exp + `</Rule><Rule><ID>a</ID>` + on + exp + `</Rule></LifecycleConfiguration>`, "InvalidArgument"},
		{"marker with a tag", rule(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`), "InvalidRequest"},
		{"abort with a tag", rule(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`), "InvalidRequest"},
		{"abort of 0 days", rule(on + `<AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload>`), "InvalidArgument"},
		{"abort without days", rule(on + `<AbortIncompleteMultipartUpload></AbortIncompleteMultipartUpload>`), "MalformedXML"},
		{"noncurrent without days", rule(on + `<NoncurrentVersionExpiration></NoncurrentVersionExpiration>`), "MalformedXML"},
		{"noncurrent of 0 days", rule(on + `<NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration>`), "InvalidArgument"},
		{"101 newer versions", rule(on + `<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration>`), "InvalidArgument"},
		{"transition to STANDARD", rule(on + `<Transition><Days>1</Days><StorageClass>STANDARD</StorageClass></Transition>`), "InvalidStorageClass"},
		{"transition without time", rule(on + `<Transition><StorageClass>GLACIER</StorageClass></Transition>`), "MalformedXML"},
		{"mixed dates and days", rule(on + `<Expiration><Days>5</Days></Expiration><Transition><Date>2030-01-01T00:00:00Z</Date><StorageClass>GLACIER</StorageClass></Transition>`), "InvalidRequest"},
		{"two transitions to one class", rule(on + `<Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition><Transition><Days>2</Days><StorageClass>GLACIER</StorageClass></Transition>`), "InvalidArgument"},
		{"sizes crossed", rule(`<Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter><Status>Enabled</Status>` + exp), "InvalidArgument"},
		{"negative size", rule(`<Filter><ObjectSizeGreaterThan>-1</ObjectSizeGreaterThan></Filter><Status>Enabled</Status>` + exp), "InvalidArgument"},
		{"tag without value", rule(`<Filter><Tag><Key>k</Key></Tag></Filter><Status>Enabled</Status>` + exp), "MalformedXML"},
		{"tag key empty", rule(`<Filter><Tag><Key></Key><Value>v</Value></Tag></Filter><Status>Enabled</Status>` + exp), "InvalidTag"},
	}
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lcbad"})
		e.ok(req{method: "PUT", target: "/lcbad?lifecycle", body: []byte(lcAll)})
		for _, c := range cases {
			w := e.do(req{method: "PUT", target: "/lcbad?lifecycle", body: []byte(c.doc)})
			var eb errorBody
			if err := xml.Unmarshal(w.Body.Bytes(), &eb); err != nil || w.Code != 400 || eb.Code != c.code {
				t.Errorf("%s: %d %s, want 400 %s (%s)", c.name, w.Code, eb.Code, c.code, eb.Message)
			}
		}
		if got := parseLC(t, e.ok(req{method: "GET", target: "/lcbad?lifecycle"}).Body.String()); !reflect.DeepEqual(got, parseLC(t, lcAll)) {
			t.Fatalf("a refused configuration changed the one before: %+v", got)
		}
	})
}

// lcExpiry: S3's rule (the user guide's "Lifecycle rules: based on an
// object's age") adds the days to the object's creation time and rounds
// up to the next midnight UTC; a shortened day is not rounded.
func TestLifecycleExpiry(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		t    string
		days int64
		day  time.Duration
		want string
	}{
		{"2024-01-01T10:30:00Z", 1, 24 * time.Hour, "2024-01-03T00:00:00Z"},
		{"2024-01-01T00:00:00Z", 1, 24 * time.Hour, "2024-01-02T00:00:00Z"},
		{"2024-01-01T23:59:59.5Z", 30, 24 * time.Hour, "2024-02-01T00:00:00Z"},
		{"2024-01-01T10:30:00Z", 2, time.Hour, "2024-01-01T12:30:00Z"},
		{"2024-01-01T10:30:00Z", 3, time.Second, "2024-01-01T10:30:03Z"},
	} {
		if got := lcExpiry(at(c.t), c.days, c.day); !got.Equal(at(c.want)) {
			t.Errorf("%s + %d × %s: %s, want %s", c.t, c.days, c.day, got, c.want)
		}
	}
}

// lcPlanName as a table: which versions of a name the rules remove, at
// a time, in an unversioned and a versioned bucket.
func TestLifecyclePlan(t *testing.T) {
	const h = time.Hour
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ver := func(id string, at time.Duration, marker bool, size int64, tags ...meta.Tag) meta.Entry {
		return meta.Entry{VersionID: id, MTime: t0.Add(at), Stamp: t0.Add(at).UnixNano(), DeleteMarker: marker, Size: size, Tags: tags}
	}
	r := func(f func(*meta.LifecycleRule)) meta.LifecycleRule {
		x := meta.LifecycleRule{ID: "r", Enabled: true, Filter: meta.LifecycleFilter{SizeGreaterThan: -1, SizeLessThan: -1}}
		f(&x)
		return x
	}
	days2 := r(func(x *meta.LifecycleRule) { x.ExpirationDays = 2 })
	nc1 := r(func(x *meta.LifecycleRule) { x.NoncurrentDays = 1 })
	nc1keep1 := r(func(x *meta.LifecycleRule) { x.NoncurrentDays, x.NewerNoncurrentVersions = 1, 1 })
	dm := r(func(x *meta.LifecycleRule) { x.ExpiredObjectDeleteMarker = true })
	kinds := func(as []lcAction) string {
		var s []string
		for _, a := range as {
			s = append(s, a.kind.String()+":"+a.version)
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct {
		name       string
		rules      []meta.LifecycleRule
		key        string
		vs         []meta.Entry
		versioning string
		now        time.Duration
		want       string
	}{
		{"young", []meta.LifecycleRule{days2}, "k", []meta.Entry{ver("null", 0, false, 1)}, "", 47 * h, ""},
		{"due, unversioned", []meta.LifecycleRule{days2}, "k", []meta.Entry{ver("null", 0, false, 1)}, "", 48 * h, "expire:null"},
		{"disabled", []meta.LifecycleRule{r(func(x *meta.LifecycleRule) { x.ExpirationDays, x.Enabled = 2, false })}, "k", []meta.Entry{ver("null", 0, false, 1)}, "", 99 * h, ""},
		{"other prefix", []meta.LifecycleRule{r(func(x *meta.LifecycleRule) { x.ExpirationDays, x.Filter.Prefix = 2, "logs/" })}, "k", []meta.Entry{ver("null", 0, false, 1)}, "", 99 * h, ""},
		{"tag missing", []meta.LifecycleRule{r(func(x *meta.LifecycleRule) { x.ExpirationDays, x.Filter.Tags = 2, []meta.Tag{{Key: "a", Value: "1"}} })}, "k", []meta.Entry{ver("null", 0, false, 1, meta.Tag{Key: "a", Value: "2"})}, "", 99 * h, ""},
		{"tag present", []meta.LifecycleRule{r(func(x *meta.LifecycleRule) { x.ExpirationDays, x.Filter.Tags = 2, []meta.Tag{{Key: "a", Value: "1"}} })}, "k", []meta.Entry{ver("null", 0, false, 1, meta.Tag{Key: "b"}, meta.Tag{Key: "a", Value: "1"})}, "", 99 * h, "expire:null"},
		{"size not above", []meta.LifecycleRule{r(func(x *meta.LifecycleRule) { x.ExpirationDays, x.Filter.SizeGreaterThan = 2, 10 })}, "k", []meta.Entry{ver("null", 0, false, 10)}, "", 99 * h, ""},
		{"size below", []meta.LifecycleRule{r(func(x *meta.LifecycleRule) { x.ExpirationDays, x.Filter.SizeLessThan = 2, 10 })}, "k", []meta.Entry{ver("null", 0, false, 9)}, "", 99 * h, "expire:null"},
		{"date passed", []meta.LifecycleRule{r(func(x *meta.LifecycleRule) { x.ExpirationDate = t0.Add(24 * h) })}, "k", []meta.Entry{ver("null", 0, false, 1)}, "", 24 * h, "expire:null"},
		{"versioned: a marker", []meta.LifecycleRule{days2}, "k", []meta.Entry{ver("b", 0, false, 1)}, "Enabled", 48 * h, "expire:"},
		{"marker current: nothing to expire", []meta.LifecycleRule{days2}, "k", []meta.Entry{ver("m", 50*h, true, 0), ver("b", 0, false, 1)}, "Enabled", 60 * h, ""},
		// Noncurrent since c came at 10 h: a day later, rounded up
		// to midnight.
		{"noncurrent since its successor", []meta.LifecycleRule{nc1}, "k", []meta.Entry{ver("c", 10*h, false, 1), ver("b", 0, false, 1)}, "Enabled", 47 * h, ""},
		{"noncurrent due", []meta.LifecycleRule{nc1}, "k", []meta.Entry{ver("c", 10*h, false, 1), ver("b", 0, false, 1)}, "Enabled", 48 * h, "noncurrent:b"},
		{"newer noncurrent kept", []meta.LifecycleRule{nc1keep1}, "k", []meta.Entry{ver("d", 20*h, false, 1), ver("c", 10*h, false, 1), ver("b", 0, false, 1)}, "Enabled", 99 * h, "noncurrent:b"},
		{"noncurrent marker", []meta.LifecycleRule{nc1}, "k", []meta.Entry{ver("d", 20*h, false, 1), ver("c", 10*h, true, 0)}, "Suspended", 99 * h, "noncurrent:c"},
		{"lone marker", []meta.LifecycleRule{dm}, "k", []meta.Entry{ver("m", 0, true, 0)}, "Enabled", 0, "delete_marker:m"},
		{"marker with a version behind", []meta.LifecycleRule{dm}, "k", []meta.Entry{ver("m", 10*h, true, 0), ver("b", 0, false, 1)}, "Enabled", 99 * h, ""},
		{"marker left alone this pass", []meta.LifecycleRule{nc1, dm}, "k", []meta.Entry{ver("m", 10*h, true, 0), ver("b", 0, false, 1)}, "Enabled", 99 * h, "noncurrent:b delete_marker:m"},
		{"current expires and noncurrent go", []meta.LifecycleRule{days2, nc1}, "k", []meta.Entry{ver("c", 10*h, false, 1), ver("b", 0, false, 1)}, "Enabled", 99 * h, "expire: noncurrent:b"},
	} {
		if got := kinds(lcPlanName(c.rules, c.key, c.vs, c.versioning, t0.Add(c.now), 24*h)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// planLease as a table: one gateway at a time runs a bucket's pass, a
// pass left half done is resumed from its marker, a done pass waits a
// day unless forced.
func TestPlanLease(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	const day, ttl = 24 * time.Hour, 2 * time.Minute
	for _, c := range []struct {
		name  string
		l     meta.LifecycleLease
		force bool
		want  leasePlan
	}{
		{"none yet", meta.LifecycleLease{}, false, leaseStart},
		{"held by another", meta.LifecycleLease{Holder: "b", Until: now.Add(time.Second), Pass: now.Add(-time.Hour)}, true, leaseSkip},
		{"another's run out: resumed", meta.LifecycleLease{Holder: "b", Until: now, Pass: now.Add(-time.Hour), Marker: "k"}, false, leaseResume},
		{"our own: resumed", meta.LifecycleLease{Holder: "me", Until: now.Add(time.Minute), Pass: now.Add(-time.Hour), Marker: "k"}, false, leaseResume},
		{"done today", meta.LifecycleLease{Pass: now.Add(-23 * time.Hour), Done: true}, false, leaseSkip},
		{"done today, forced", meta.LifecycleLease{Pass: now.Add(-23 * time.Hour), Done: true}, true, leaseStart},
		{"done yesterday", meta.LifecycleLease{Pass: now.Add(-24 * time.Hour), Done: true}, false, leaseStart},
	} {
		got, l := planLease(c.l, "me", now, day, ttl, c.force)
		if got != c.want {
			t.Errorf("%s: plan %d, want %d", c.name, got, c.want)
			continue
		}
		switch got {
		case leaseStart:
			if l != (meta.LifecycleLease{Holder: "me", Until: now.Add(ttl), Pass: now}) {
				t.Errorf("%s: lease %+v", c.name, l)
			}
		case leaseResume:
			if l.Holder != "me" || l.Marker != c.l.Marker || !l.Pass.Equal(c.l.Pass) || !l.Until.Equal(now.Add(ttl)) {
				t.Errorf("%s: lease %+v", c.name, l)
			}
		}
	}
}

// lcGateway is a second gateway on e's pool whose clock runs *skew
// ahead, to run lifecycle passes days later without waiting for them.
func (e *env) lcGateway(skew *time.Duration, cfg LifecycleConfig, reg prometheus.Registerer) *Gateway {
	e.t.Helper()
	gw, err := New(Config{IO: e.io, Now: func() time.Time { return time.Now().Add(*skew) }, Lifecycle: cfg, Metrics: reg})
	if err != nil {
		e.t.Fatal(err)
	}
	return gw
}

// counterValue is the value of the counter name{label=value} in reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func (e *env) runLC(gw *Gateway, force bool, buckets ...string) LifecycleResult {
	e.t.Helper()
	res, err := gw.RunLifecycle(context.Background(), buckets, force)
	if err != nil {
		e.t.Fatalf("lifecycle: %v (%+v)", err, res)
	}
	gw.Quiesce()
	return res
}

// Expiration in a bucket never versioned (S3's Expiration Days): the
// objects a rule selects go once their day comes — S3's rounding to
// midnight — with their data; the others stay. x-amz-expiration on PUT,
// GET and HEAD says when and by which rule.
func TestLifecycleExpiration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lcexp"})
		for _, k := range []string{"logs/a", "logs/b", "keep/c"} {
			e.ok(req{method: "PUT", target: "/lcexp/" + k, body: []byte("data of " + k)})
		}
		e.ok(req{method: "PUT", target: "/lcexp?lifecycle", body: []byte(`<LifecycleConfiguration><Rule><ID>logs rule</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule></LifecycleConfiguration>`)})
		_, en := e.entryOf("lcexp", "logs/a")
		want := fmt.Sprintf(`expiry-date="%s", rule-id="logs rule"`, lcExpiry(en.MTime, 2, 24*time.Hour).Format(http.TimeFormat))
		for _, m := range []string{"GET", "HEAD"} {
			if got := e.ok(req{method: m, target: "/lcexp/logs/a"}).Header().Get("x-amz-expiration"); got != want {
				t.Fatalf("%s x-amz-expiration %q, want %q", m, got, want)
			}
		}
		if got := e.ok(req{method: "PUT", target: "/lcexp/logs/new", body: []byte("n")}).Header().Get("x-amz-expiration"); !strings.Contains(got, `rule-id="logs rule"`) {
			t.Fatalf("PUT x-amz-expiration %q", got)
		}
		if got := e.ok(req{method: "GET", target: "/lcexp/keep/c"}).Header().Get("x-amz-expiration"); got != "" {
			t.Fatalf("an object no rule expires: x-amz-expiration %q", got)
		}

		var skew time.Duration
		reg := prometheus.NewRegistry()
		lc := e.lcGateway(&skew, LifecycleConfig{}, reg)
		if res := e.runLC(lc, false); res.Expired != 0 || len(res.Buckets) != 1 || res.Buckets[0].Outcome != "done" {
			t.Fatalf("first pass: %+v", res)
		}
		// Two days on, before the midnight S3 rounds to: nothing; the
		// day's pass is done, so a pass not forced is skipped.
		skew = 47 * time.Hour
		if res := e.runLC(lc, true); res.Expired != 0 {
			t.Fatalf("a pass before the expiry: %+v", res)
		}
		if res := e.runLC(lc, false); res.Buckets[0].Outcome != "skipped" {
			t.Fatalf("a second pass the same day: %+v", res)
		}
		skew = 72 * time.Hour
		if res := e.runLC(lc, false); res.Expired != 3 || res.Buckets[0].Outcome != "done" {
			t.Fatalf("the pass after the expiry: %+v", res)
		}
		for _, k := range []string{"logs/a", "logs/b", "logs/new"} {
			e.want(e.do(req{method: "GET", target: "/lcexp/" + k}), 404, "NoSuchKey")
		}
		if w := e.ok(req{method: "GET", target: "/lcexp/keep/c"}); w.Body.String() != "data of keep/c" {
			t.Fatalf("keep/c: %q", w.Body.String())
		}
		if data, garbage := e.dataObjects(); data != 1 || garbage != 0 {
			t.Fatalf("after expiry: %d data objects, %d garbage records; want 1, 0", data, garbage)
		}
		if n := counterValue(t, reg, "cuttle_s3_lifecycle_actions_total", "action", "expire"); n != 3 {
			t.Fatalf("cuttle_s3_lifecycle_actions_total{action=expire} = %v", n)
		}
		if n := counterValue(t, reg, "cuttle_s3_lifecycle_passes_total", "result", "skipped"); n != 1 {
			t.Fatalf("cuttle_s3_lifecycle_passes_total{result=skipped} = %v", n)
		}
		// A bucket named is run whether or not it has rules; one that
		// does not exist is an error.
		if _, err := lc.RunLifecycle(context.Background(), []string{"nosuchlcbucket"}, true); err == nil {
			t.Fatal("a pass over a missing bucket")
		}
	})
}

// A versioned bucket (S3's lifecycle and versioning): a current version
// expires into a delete marker, noncurrent versions go once noncurrent
// NoncurrentDays (the NewerNoncurrentVersions newest kept), and the
// delete marker left alone goes by ExpiredObjectDeleteMarker — with a
// lifecycle day of an hour, as --lifecycle-day shortens it.
func TestLifecycleVersioned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lcver"})
		e.setVersioning("lcver", "Enabled")
		e.ok(req{method: "PUT", target: "/lcver?lifecycle", body: []byte(`<LifecycleConfiguration>
 <Rule><ID>k</ID><Filter><Prefix>k</Prefix></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration>
   <NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration></Rule>
 <Rule><ID>n</ID><Filter><Prefix>n/</Prefix></Filter><Status>Enabled</Status>
   <NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>
 <Rule><ID>dm</ID><Filter></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
</LifecycleConfiguration>`)})
		for _, body := range []string{"k1", "k2"} {
			e.ok(req{method: "PUT", target: "/lcver/k", body: []byte(body)})
		}
		for _, body := range []string{"n1", "n2", "n3"} {
			e.ok(req{method: "PUT", target: "/lcver/n/x", body: []byte(body)})
		}
		var skew time.Duration
		lc := e.lcGateway(&skew, LifecycleConfig{Day: time.Hour}, nil)
		pass := func(at time.Duration) LifecycleResult {
			skew = at
			return e.runLC(lc, true, "lcver")
		}
		if res := pass(90 * time.Minute); res.Noncurrent != 2 || res.Expired != 0 {
			t.Fatalf("at 1.5 h: %+v", res)
		}
		if got, want := e.versions("lcver", "").String(), "k@"+etagOf("k2")+"* n/x@"+etagOf("n3")+"* n/x@"+etagOf("n2"); got != want {
			t.Fatalf("versions at 1.5 h: %s, want %s", got, want)
		}
		if res := pass(150 * time.Minute); res.Expired != 1 || res.Noncurrent != 0 {
			t.Fatalf("at 2.5 h: %+v", res)
		}
		e.want(e.do(req{method: "GET", target: "/lcver/k"}), 404, "NoSuchKey")
		if got, want := e.versions("lcver", "&prefix=k").String(), "k@DM* k@"+etagOf("k2"); got != want {
			t.Fatalf("at 2.5 h: %s, want %s", got, want)
		}
		// k2 noncurrent for 1.5 h goes, and the marker left alone with it.
		if res := pass(4 * time.Hour); res.Noncurrent != 1 || res.DeleteMarkers != 1 {
			t.Fatalf("at 4 h: %+v", res)
		}
		if got := e.versions("lcver", "&prefix=k").String(); got != "" {
			t.Fatalf("at 4 h, k's versions: %s", got)
		}
		if data, garbage := e.dataObjects(); data != 2 || garbage != 0 {
			t.Fatalf("after the passes: %d data objects, %d garbage records; want n/x's 2, 0", data, garbage)
		}
	})
}

// AbortIncompleteMultipartUpload: uploads a rule selects are aborted
// DaysAfterInitiation after they began, their parts' data removed; the
// others stay.
func TestLifecycleAbortUploads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lcmp"})
		e.ok(req{method: "PUT", target: "/lcmp?lifecycle", body: []byte(`<LifecycleConfiguration><Rule><ID>tmp</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status>
			<AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>`)})
		for _, k := range []string{"tmp/big", "keep/big"} {
			id := decode[initiateMultipartUploadResult](t, e.ok(req{method: "POST", target: "/lcmp/" + k + "?uploads"})).UploadID
			e.ok(req{method: "PUT", target: "/lcmp/" + k + "?partNumber=1&uploadId=" + id, body: []byte("part of " + k)})
		}
		var skew time.Duration
		lc := e.lcGateway(&skew, LifecycleConfig{Day: time.Minute}, nil)
		skew = 119 * time.Second
		if res := e.runLC(lc, true); res.Aborted != 0 {
			t.Fatalf("before the day: %+v", res)
		}
		skew = 121 * time.Second
		if res := e.runLC(lc, true); res.Aborted != 1 {
			t.Fatalf("after the day: %+v", res)
		}
		lu := decode[listMultipartUploadsResult](t, e.ok(req{method: "GET", target: "/lcmp?uploads"}))
		if len(lu.Uploads) != 1 || lu.Uploads[0].Key != "keep/big" {
			t.Fatalf("uploads left: %+v", lu)
		}
		if data, garbage := e.dataObjects(); data != 1 || garbage != 0 {
			t.Fatalf("after the abort: %d data objects, %d garbage records; want 1, 0", data, garbage)
		}
	})
}

// Several gateways: a bucket whose lease another gateway holds is left
// to it; once the lease runs out the pass is resumed from the marker it
// saved, not started over; removals are paced by MaxOps.
func TestLifecycleLeaseAndResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.ok(req{method: "PUT", target: "/lcres"})
		for _, k := range []string{"a", "b", "c", "d"} {
			e.ok(req{method: "PUT", target: "/lcres/" + k, body: []byte(k)})
		}
		e.ok(req{method: "PUT", target: "/lcres?lifecycle", body: []byte(`<LifecycleConfiguration><Rule><ID>all</ID><Filter></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`)})
		var waits []time.Duration
		skew := 2 * time.Hour
		lc := e.lcGateway(&skew, LifecycleConfig{Day: time.Hour, MaxOps: 2, Batch: 1, Wait: func(_ context.Context, d time.Duration) error {
			waits = append(waits, d)
			return nil
		}}, nil)
		ctx := context.Background()
		b, err := lc.Meta().GetBucket(ctx, "lcres")
		if err != nil {
			t.Fatal(err)
		}
		// Another gateway's pass, stopped after "a" and "b".
		now := lc.meta.Now()
		rec, err := lc.Meta().GetLease(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lc.Meta().SwapLease(ctx, b.ID, rec, meta.LifecycleLease{Holder: "other", Until: now.Add(time.Hour), Pass: now, Marker: "b\x01"}); err != nil {
			t.Fatal(err)
		}
		if res := e.runLC(lc, true); res.Buckets[0].Outcome != "busy" || res.Expired != 0 {
			t.Fatalf("while another holds the lease: %+v", res)
		}
		skew += time.Hour
		if res := e.runLC(lc, false); res.Buckets[0].Outcome != "resumed" || res.Expired != 2 {
			t.Fatalf("after the lease ran out: %+v", res)
		}
		for k, status := range map[string]int{"a": 200, "b": 200, "c": 404, "d": 404} {
			if w := e.do(req{method: "GET", target: "/lcres/" + k}); w.Code != status {
				t.Fatalf("%s: %d, want %d", k, w.Code, status)
			}
		}
		rec, err = lc.Meta().GetLease(ctx, b.ID)
		if err != nil || !rec.Lease.Done || rec.Lease.Holder != "" || rec.Lease.Marker != "" {
			t.Fatalf("the lease after the pass: %+v %v", rec.Lease, err)
		}
		if res := e.runLC(lc, true); res.Expired != 2 {
			t.Fatalf("a forced pass: %+v", res)
		}
		if len(waits) == 0 {
			t.Fatal("MaxOps 2: the removals were not paced")
		}
		for _, d := range waits {
			if d <= 0 || d > 2*time.Second {
				t.Fatalf("paced by %v", waits)
			}
		}
		// The lease goes with its bucket.
		for _, k := range []string{"a", "b"} {
			e.ok(req{method: "DELETE", target: "/lcres/" + k})
		}
		e.ok(req{method: "DELETE", target: "/lcres"})
		for o, err := range e.io.Objects(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(o.Name, "s3.lc.") {
				t.Fatalf("%s left after its bucket", o.Name)
			}
		}
	})
}

// FuzzLifecycle: a LifecycleConfiguration body never panics the
// gateway; what it refuses is one of S3's codes for it, and what it
// takes is answered as a document that reads back the same, and whose
// rules survive the bucket record's encoding.
func FuzzLifecycle(f *testing.F) {
	f.Add([]byte(lcAll))
	f.Add([]byte(`<LifecycleConfiguration><Rule><Prefix></Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>`))
	f.Add([]byte(`<LifecycleConfiguration><Rule><Filter><And><Tag><Key>a</Key><Value>b</Value></Tag></And></Filter><Status>Disabled</Status><Transition><Date>2030-01-01</Date><StorageClass>GLACIER</StorageClass></Transition></Rule></LifecycleConfiguration>`))
	codes := map[string]bool{"MalformedXML": true, "InvalidArgument": true, "InvalidRequest": true, "InvalidStorageClass": true, "InvalidTag": true, "MaxMessageLengthExceeded": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		var doc lifecycleConfiguration
		err := decodeXMLBytes(body, &doc)
		var rules []meta.LifecycleRule
		if err == nil {
			rules, err = checkLifecycle(doc)
		}
		if err != nil {
			if c := translate(err).Code; !codes[c] {
				t.Fatalf("%q: %v -> %s", body, err, c)
			}
			return
		}
		out, xerr := xml.Marshal(lifecycleDoc(rules))
		if xerr != nil {
			t.Fatal(xerr)
		}
		var again lifecycleConfiguration
		if err := xml.Unmarshal(out, &again); err != nil {
			t.Fatal(err)
		}
		back, err := checkLifecycle(again)
		if err != nil || !reflect.DeepEqual(back, rules) {
			t.Fatalf("%q -> %s -> %+v %v", body, out, back, err)
		}
		rec, err := meta.DecodeBucket(meta.Bucket{Name: "b", Lifecycle: rules}.Encode())
		if err != nil || !reflect.DeepEqual(rec.Lifecycle, rules) {
			t.Fatalf("%q: the record: %+v %v", body, rec.Lifecycle, err)
		}
	})
}
