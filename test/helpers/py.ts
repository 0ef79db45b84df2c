/**
 * The first line of the python3 programs the tests start: the program is
 * killed (SIGKILL) when the process that started it ends (prctl(2)
 * PR_SET_PDEATHSIG = 1, SIGKILL = 9), so that a test that fails part-way
 * leaves no server or client behind holding its output open.
 */
export const DIE_WITH_PARENT = 'import ctypes; ctypes.CDLL(None).prctl(1, 9)\n';
