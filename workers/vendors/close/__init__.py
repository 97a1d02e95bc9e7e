"""Close (close.com): everything leadrelay knows of it, by role (workers/vendors/__init__.py
says which). Imports nothing: each role module is imported where its layer needs it."""
