"""The role prompt templates, one markdown file per role and mode.

A package only so the templates travel inside the wheel as package data; they
are read with importlib.resources (runners/prompts.py), never by path.
"""
