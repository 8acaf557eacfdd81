import sys

from sizing.cli import main

sys.exit(main())
