"""Model runs as a library: runtime adapters, prompts, role contracts, workspaces.

Knows nothing of SQLite or chat; `chatbot` drives it.
"""
