"""The chat command layer: commands, replies and reactions from owners move cards."""

from chatbot.chat.intake import ChatService

__all__ = ["ChatService"]
