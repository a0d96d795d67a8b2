import sys

from assets.cli import main

sys.exit(main())
