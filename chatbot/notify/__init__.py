"""What the bot says on its own: notices of board changes and runs, the outbox that
delivers them (and every chat answer) once, and the formatting they share."""
