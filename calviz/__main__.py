import sys

from calviz.cli import main

sys.exit(main())
