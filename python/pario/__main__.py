import sys

from pario.cli import main

sys.exit(main())
