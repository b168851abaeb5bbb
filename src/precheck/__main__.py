from .entry import console

console()
