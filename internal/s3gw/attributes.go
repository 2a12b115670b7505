package s3gw

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/cuttlestore/cuttle/internal/s3gw/meta"
)

// GetObjectAttributes (S3 API reference): an object's ETag, checksum,
// parts, storage class and size, the ones x-amz-object-attributes names,
// in one answer without its data.

// objectAttributes is GetObjectAttributes' answer.
type objectAttributes struct {
	XMLName      xml.Name               `xml:"GetObjectAttributesOutput"`
	Xmlns        string                 `xml:"xmlns,attr"`
	ETag         string                 `xml:"ETag,omitempty"`
	Checksum     *checksumFields        `xml:"Checksum,omitempty"`
	ObjectParts  *objectAttributesParts `xml:"ObjectParts,omitempty"`
	StorageClass string                 `xml:"StorageClass,omitempty"`
	ObjectSize   *int64                 `xml:"ObjectSize,omitempty"`
}

type objectAttributesParts struct {
	TotalPartsCount      int                   `xml:"PartsCount"` // the element S3 names so
	PartNumberMarker     int                   `xml:"PartNumberMarker"`
	NextPartNumberMarker int                   `xml:"NextPartNumberMarker"`
	MaxParts             int                   `xml:"MaxParts"`
	IsTruncated          bool                  `xml:"IsTruncated"`
	Parts                []objectAttributePart `xml:"Part"`
}

type objectAttributePart struct {
	PartNumber int   `xml:"PartNumber"`
	Size       int64 `xml:"Size"`
	checksumFields
}

// parseObjectAttributes reads x-amz-object-attributes (comma-separated,
// perhaps over several headers): InvalidArgument when it is missing or
// names an attribute S3 does not have.
func parseObjectAttributes(h http.Header) (map[string]bool, error) {
	want := map[string]bool{}
	for _, v := range h.Values("X-Amz-Object-Attributes") {
		for _, a := range strings.Split(v, ",") {
			a = strings.TrimSpace(a)
			switch a {
			case "":
			case "ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize":
				want[a] = true
			default:
				return nil, errInvalidArgument.withMessage("Invalid attribute name specified: %q.", a)
			}
		}
	}
	if len(want) == 0 {
		return nil, errInvalidArgument.withMessage("The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty.")
	}
	return want, nil
}

// headerInt reads a non-negative integer header, def when absent.
func headerInt(h http.Header, name string, def int) (int, error) {
	v := h.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, errInvalidArgument.withMessage("%s %q: give a non-negative integer.", name, v)
	}
	return n, nil
}

func (g *Gateway) getObjectAttributes(w http.ResponseWriter, r *http.Request, rq *request) error {
	want, err := parseObjectAttributes(r.Header)
	if err != nil {
		return err
	}
	maxParts, err := headerInt(r.Header, "X-Amz-Max-Parts", 1000)
	if err != nil {
		return err
	}
	marker, err := headerInt(r.Header, "X-Amz-Part-Number-Marker", 0)
	if err != nil {
		return err
	}
	_, _, en, err := g.requestObject(r.Context(), rq, meta.PermRead, "s3:GetObjectAttributes")
	if err != nil {
		return err
	}
	res := objectAttributes{Xmlns: xmlns}
	if want["ETag"] {
		res.ETag = en.ETag
	}
	if want["Checksum"] && !en.Checksum.IsZero() {
		// S3 gives a composite checksum here without its "-N".
		c := en.Checksum
		c.Value, _, _ = strings.Cut(c.Value, "-")
		f := xmlChecksum(c, true)
		res.Checksum = &f
	}
	if want["ObjectParts"] {
		res.ObjectParts = objectParts(en, marker, maxParts)
	}
	if want["StorageClass"] {
		res.StorageClass = "STANDARD"
		if sc := en.Meta["x-amz-storage-class"]; sc != "" {
			res.StorageClass = sc
		}
	}
	if want["ObjectSize"] {
		res.ObjectSize = &en.Size
	}
	w.Header().Set("Last-Modified", en.MTime.UTC().Format(http.TimeFormat))
	writeXML(w, http.StatusOK, res)
	return nil
}

// objectParts is ObjectParts for an object: none for one not uploaded in
// parts; the count for a multipart object; and its parts, numbered above
// marker, up to max, when they had checksums (as S3 lists them only
// then) and the entry kept them.
func objectParts(en meta.Entry, marker, max int) *objectAttributesParts {
	i := strings.LastIndexByte(en.ETag, '-')
	if i < 0 {
		return nil
	}
	n, err := strconv.Atoi(en.ETag[i+1:])
	if err != nil {
		return nil
	}
	op := &objectAttributesParts{TotalPartsCount: n, PartNumberMarker: marker, MaxParts: max}
	for _, p := range en.Parts {
		if p.Number <= marker {
			continue
		}
		if len(op.Parts) == max {
			op.IsTruncated = true
			break
		}
		op.Parts = append(op.Parts, objectAttributePart{PartNumber: p.Number, Size: p.Size,
			checksumFields: xmlChecksum(meta.Checksum{Algorithm: en.Checksum.Algorithm, Value: p.Checksum}, false)})
		op.NextPartNumberMarker = p.Number
	}
	return op
}
