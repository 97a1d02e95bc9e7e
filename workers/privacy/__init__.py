"""A person's data: find everything held about them (export), erase it and keep them
forgotten (forget, the suppression list), and the audit trail of who changed what."""
