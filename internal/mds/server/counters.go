package server

// counters are the server's event counts, under Server.mu.
type counters struct {
	opened, closed, stale, autoclosed, rejected, fenced, reconnected, requests, badMessages uint64
}

// Counters are the server's event counts since it started.
type Counters struct {
	SessionsOpened, SessionsClosed, SessionsStale, SessionsAutoclosed uint64
	SessionsRejected, ClientsFenced, ClientsReconnected               uint64
	Requests, BadMessages                                             uint64
}

func (c *counters) snapshot() Counters {
	return Counters{SessionsOpened: c.opened, SessionsClosed: c.closed, SessionsStale: c.stale, SessionsAutoclosed: c.autoclosed,
		SessionsRejected: c.rejected, ClientsFenced: c.fenced, ClientsReconnected: c.reconnected, Requests: c.requests,
		BadMessages: c.badMessages}
}
