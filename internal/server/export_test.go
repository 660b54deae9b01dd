package server

// TrackedAuthClients is how many client addresses the wrong-key back-off holds.
func TrackedAuthClients(s *Server) int { return s.backoff.len() }
