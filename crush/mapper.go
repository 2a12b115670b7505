package crush

// Workspace is the scratch memory of DoRule: uniform-bucket permutations
// and the intermediate result vectors. A Workspace belongs to one goroutine
// at a time; reuse it across calls so that mapping allocates nothing.
type Workspace struct {
	m       *Map
	gen     uint64
	perms   []permState // by -1-bucket id
	a, b, c []int32
}

// NewWorkspace returns a workspace for m.
func (m *Map) NewWorkspace() *Workspace {
	ws := &Workspace{}
	ws.bind(m)
	return ws
}

func (ws *Workspace) bind(m *Map) {
	ws.m = m
	ws.gen = 0
	ws.perms = make([]permState, len(m.buckets))
	for i, b := range m.buckets {
		if b != nil {
			ws.perms[i].perm = make([]uint32, len(b.Items))
		}
	}
}

// begin prepares ws for one DoRule call with the given result size.
func (ws *Workspace) begin(m *Map, resultMax int) {
	if ws.m != m {
		ws.bind(m)
	}
	// Ceph starts every call with fresh permutations; bumping the
	// generation invalidates them all at once.
	ws.gen++
	if cap(ws.a) < resultMax {
		ws.a = make([]int32, resultMax)
		ws.b = make([]int32, resultMax)
		ws.c = make([]int32, resultMax)
	}
	ws.a, ws.b, ws.c = ws.a[:resultMax], ws.b[:resultMax], ws.c[:resultMax]
}

// perm returns bucket b's permutation state, reset if it is stale.
func (ws *Workspace) perm(b *Bucket) *permState {
	p := &ws.perms[-1-b.ID]
	if p.gen != ws.gen {
		p.gen, p.x, p.n = ws.gen, 0, 0
	}
	return p
}

// mapping carries the inputs that stay fixed during one DoRule call.
type mapping struct {
	m       *Map
	ws      *Workspace
	x       int32
	weights []uint32 // the reweight vector: 16.16 per device, indexed by id
	args    *ChooseArgs
}

// DoRule maps input x through rule ruleID and writes up to len(out)
// devices (or buckets, for rules that stop above the device level) to out,
// returning how many it wrote. weights is the reweight vector: for each
// device id, 0x10000 keeps it, 0 rejects it, values between reject it for
// that fraction of inputs; devices beyond its length are rejected. args
// selects a weight set (nil for none). Indep rules keep a slot for every
// requested replica and fill the ones they cannot with ItemNone.
//
// DoRule returns what Ceph's crush_do_rule returns for the same input; an
// unknown rule maps to nothing.
func (m *Map) DoRule(ws *Workspace, ruleID int32, x int32, out []int32, weights []uint32, args *ChooseArgs) int {
	rule := m.Rule(ruleID)
	if rule == nil || len(out) == 0 {
		return 0
	}
	resultMax := len(out)
	ws.begin(m, resultMax)
	mp := mapping{m: m, ws: ws, x: x, weights: weights, args: args}
	t := m.tunables
	var (
		// Ceph's choose_total_tries counts retries; add one to get tries.
		chooseTries        = int(t.ChooseTotalTries) + 1
		chooseLeafTries    = 0
		localRetries       = int(t.ChooseLocalTries)
		localFallbackTries = int(t.ChooseLocalFallbackTries)
		varyR              = int(t.ChooseleafVaryR)
		stable             = int(t.ChooseleafStable)
		w, o, c            = ws.a, ws.b, ws.c
		wsize, resultLen   int
	)
	for _, step := range rule.Steps {
		switch step.Op {
		case OpTake:
			if m.ItemExists(step.Arg1) {
				w[0] = step.Arg1
				wsize = 1
			}
		case OpSetChooseTries:
			if step.Arg1 > 0 {
				chooseTries = int(step.Arg1)
			}
		case OpSetChooseLeafTries:
			if step.Arg1 > 0 {
				chooseLeafTries = int(step.Arg1)
			}
		case OpSetChooseLocalTries:
			if step.Arg1 >= 0 {
				localRetries = int(step.Arg1)
			}
		case OpSetChooseLocalFallbackTries:
			if step.Arg1 >= 0 {
				localFallbackTries = int(step.Arg1)
			}
		case OpSetChooseLeafVaryR:
			if step.Arg1 >= 0 {
				varyR = int(step.Arg1)
			}
		case OpSetChooseLeafStable:
			if step.Arg1 >= 0 {
				stable = int(step.Arg1)
			}
		case OpChooseFirstN, OpChooseLeafFirstN, OpChooseIndep, OpChooseLeafIndep:
			if wsize == 0 {
				continue
			}
			firstn := step.Op == OpChooseFirstN || step.Op == OpChooseLeafFirstN
			toLeaf := step.Op == OpChooseLeafFirstN || step.Op == OpChooseLeafIndep
			osize := 0
			for i := range wsize {
				numRep := int(step.Arg1)
				if numRep <= 0 {
					numRep += resultMax
					if numRep <= 0 {
						continue
					}
				}
				bucket := m.Bucket(w[i])
				if bucket == nil { // w[i] is a device or ItemNone
					continue
				}
				if firstn {
					recurseTries := chooseTries
					if chooseLeafTries > 0 {
						recurseTries = chooseLeafTries
					} else if t.ChooseleafDescendOnce != 0 {
						recurseTries = 1
					}
					osize += mp.chooseFirstN(bucket, numRep, step.Arg2, o[osize:], 0, resultMax-osize,
						chooseTries, recurseTries, localRetries, localFallbackTries, toLeaf, varyR, stable, c[osize:], 0)
				} else {
					outSize := min(numRep, resultMax-osize)
					leafTries := 1
					if chooseLeafTries > 0 {
						leafTries = chooseLeafTries
					}
					mp.chooseIndep(bucket, outSize, numRep, step.Arg2, o[osize:], 0,
						chooseTries, leafTries, toLeaf, c[osize:], 0)
					osize += outSize
				}
			}
			if toLeaf {
				copy(o[:osize], c[:osize])
			}
			w, o = o, w
			wsize = osize
		case OpEmit:
			for i := 0; i < wsize && resultLen < resultMax; i++ {
				out[resultLen] = w[i]
				resultLen++
			}
			wsize = 0
		}
	}
	return resultLen
}

// isOut reports whether the reweight vector rejects item for input x.
func (mp *mapping) isOut(item int32) bool {
	if int(item) >= len(mp.weights) {
		return true
	}
	w := mp.weights[item]
	switch {
	case w >= WeightOne:
		return false
	case w == 0:
		return true
	}
	return Hash2(uint32(mp.x), uint32(item))&0xffff >= w
}

// bucketChoose picks an item of b for rank r, with b's weight-set override.
func (mp *mapping) bucketChoose(b *Bucket, r int32, position int) int32 {
	var arg *ChooseArg
	if mp.args != nil {
		if idx := int(-1 - b.ID); idx < len(mp.args.byBucket) {
			arg = &mp.args.byBucket[idx]
		}
	}
	return b.choose(mp.ws.perm(b), mp.x, r, arg, position)
}

// itemType returns the type of item, or false if it names nothing.
func (mp *mapping) itemType(item int32) (int32, bool) {
	if item >= 0 {
		return 0, int(item) < len(mp.m.devices)
	}
	b := mp.m.Bucket(item)
	if b == nil {
		return 0, false
	}
	return b.Type, true
}

// chooseFirstN fills out[outpos:] with up to numRep distinct items of the
// wanted type below b (Ceph's crush_choose_firstn). With toLeaf it also
// descends from each chosen item to a device, written to out2.
func (mp *mapping) chooseFirstN(b *Bucket, numRep int, wantType int32, out []int32, outpos, outSize int,
	tries, recurseTries, localRetries, localFallbackTries int, toLeaf bool, varyR, stable int,
	out2 []int32, parentR int) int {
	count := outSize
	rep := outpos
	if stable != 0 {
		rep = 0
	}
	for ; rep < numRep && count > 0; rep++ {
		ftotal := 0
		skipRep := false
		var item int32
	descent:
		for {
			in := b
			flocal := 0
			for {
				collide := false
				r := int32(rep + parentR + ftotal)
				reject := false
				if len(in.Items) == 0 {
					reject = true
				} else {
					if localFallbackTries > 0 && flocal >= len(in.Items)>>1 && flocal > localFallbackTries {
						item = in.permChoose(mp.ws.perm(in), mp.x, r)
					} else {
						item = mp.bucketChoose(in, r, outpos)
					}
					if int(item) >= len(mp.m.devices) {
						skipRep = true
						break descent
					}
					itemType, ok := mp.itemType(item)
					if !ok {
						skipRep = true
						break descent
					}
					if itemType != wantType {
						if item >= 0 {
							skipRep = true
							break descent
						}
						in = mp.m.Bucket(item)
						continue // retry_bucket
					}
					for i := range outpos {
						if out[i] == item {
							collide = true
							break
						}
					}
					if !collide && toLeaf {
						if item < 0 {
							subR := 0
							if varyR != 0 {
								subR = int(r) >> (varyR - 1)
							}
							leafRep := outpos + 1
							if stable != 0 {
								leafRep = 1
							}
							if mp.chooseFirstN(mp.m.Bucket(item), leafRep, 0, out2, outpos, count,
								recurseTries, 0, localRetries, localFallbackTries, false, varyR, stable, nil, subR) <= outpos {
								reject = true
							}
						} else {
							out2[outpos] = item
						}
					}
					if !reject && !collide && itemType == 0 {
						reject = mp.isOut(item)
					}
				}
				if !reject && !collide {
					break descent
				}
				ftotal++
				flocal++
				switch {
				case collide && flocal <= localRetries:
					continue // retry the same bucket
				case localFallbackTries > 0 && flocal <= len(in.Items)+localFallbackTries:
					continue // exhaustive search of the bucket
				case ftotal < tries:
					continue descent
				}
				skipRep = true
				break descent
			}
		}
		if skipRep {
			continue
		}
		out[outpos] = item
		outpos++
		count--
	}
	return outpos
}

// chooseIndep fills out[outpos:outpos+left] with distinct items of the
// wanted type below b, keeping each replica in its slot (Ceph's
// crush_choose_indep): slots that cannot be filled get ItemNone, so the
// others do not shift. With toLeaf it also descends to devices, into out2.
func (mp *mapping) chooseIndep(b *Bucket, left, numRep int, wantType int32, out []int32, outpos int,
	tries, recurseTries int, toLeaf bool, out2 []int32, parentR int) {
	endpos := outpos + left
	for rep := outpos; rep < endpos; rep++ {
		out[rep] = itemUndef
		if out2 != nil {
			out2[rep] = itemUndef
		}
	}
	for ftotal := 0; left > 0 && ftotal < tries; ftotal++ {
		for rep := outpos; rep < endpos; rep++ {
			if out[rep] != itemUndef {
				continue
			}
			in := b
			for {
				// The choice depends on the position even in nested calls,
				// so the same bucket chosen at another position tends to
				// yield another item.
				r := int32(rep + parentR)
				if in.Alg == AlgUniform && len(in.Items)%numRep == 0 {
					r += int32((numRep + 1) * ftotal)
				} else {
					r += int32(numRep * ftotal)
				}
				if len(in.Items) == 0 {
					break
				}
				item := mp.bucketChoose(in, r, outpos)
				itemType, ok := mp.itemType(item)
				if int(item) >= len(mp.m.devices) || !ok || (itemType != wantType && item >= 0) {
					out[rep] = ItemNone
					if out2 != nil {
						out2[rep] = ItemNone
					}
					left--
					break
				}
				if itemType != wantType {
					in = mp.m.Bucket(item)
					continue
				}
				collide := false
				for i := outpos; i < endpos; i++ {
					if out[i] == item {
						collide = true
						break
					}
				}
				if collide {
					break
				}
				if toLeaf {
					if item < 0 {
						mp.chooseIndep(mp.m.Bucket(item), 1, numRep, 0, out2, rep, recurseTries, 0, false, nil, int(r))
						if out2[rep] == ItemNone {
							break // no leaf below this item
						}
					} else {
						out2[rep] = item
					}
				}
				if itemType == 0 && mp.isOut(item) {
					break
				}
				out[rep] = item
				left--
				break
			}
		}
	}
	for rep := outpos; rep < endpos; rep++ {
		if out[rep] == itemUndef {
			out[rep] = ItemNone
		}
		if out2 != nil && out2[rep] == itemUndef {
			out2[rep] = ItemNone
		}
	}
}
