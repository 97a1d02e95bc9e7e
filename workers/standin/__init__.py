"""The sandbox's stand-in for Meta's Graph API, over real HTTP on loopback. Only the
sandbox (and tests) load it, lazily; it imports only common."""
