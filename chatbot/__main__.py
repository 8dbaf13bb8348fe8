import sys

from chatbot.app.cli import main

sys.exit(main())
