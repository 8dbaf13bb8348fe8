"""The intent-board chat-ops bot."""
