"""The chat command layer: commands, replies and reactions from owners move cards."""

from chatbot.chat.service import ChatService

__all__ = ["ChatService"]
