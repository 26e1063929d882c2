from pario.cli import console

console()
