import sys

from calviz._launch import main

sys.exit(main())
