"""The board's domain: phases, actions and the one transition table."""
