"""What failed, and keeping it tidy: the dead-letter store, replay, retention. Imports
intake and below."""
