# Calls of this program's own functions, counted by Python itself and written to
# the file argv[1] as "FUNCTION<TAB>FILENAME<TAB>COUNT" lines.
#
# The count is sys.setprofile's "call" events, which CPython 3.11 raises at the
# same two points where it fires the stock function__entry marker (ceval.c):
# a frame's RESUME while a trace or profile function is set (the DO_TRACING
# path: a call, and a generator resumed after a yield), and a generator entered
# by throw()/close(). Outside a profiled stretch function__entry fires for
# thrown-into generators only, so everything here happens while profiling.
import sys
from collections import Counter

counts = Counter()


def profile(frame, event, arg):
    # Python does not profile this function's own frame (tstate->tracing).
    if event == "call" and frame.f_code.co_filename == __file__:
        counts[frame.f_code.co_name] += 1


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def endless():
    i = 0
    while True:
        yield i
        i += 1


class Account:
    def __init__(self):
        self.balance = 0

    def deposit(self, amount):
        self.balance += amount
        return self.balance

    @staticmethod
    def fee(amount):
        return amount // 10


def squares(n):
    return [i * i for i in range(n)]


def work():
    total = fib(12)
    total += sum(countdown(9))
    ticks = endless()
    for _ in range(4):
        total += next(ticks)
    ticks.close()  # a thrown-into generator: its GeneratorExit entry
    account = Account()
    for amount in range(17):
        account.deposit(amount - Account.fee(amount))
    total += account.balance + sum(squares(6))
    return total


sys.setprofile(profile)
work()
sys.setprofile(None)

with open(sys.argv[1], "w") as out:
    for name, count in sorted(counts.items()):
        out.write(f"{name}\t{__file__}\t{count}\n")
