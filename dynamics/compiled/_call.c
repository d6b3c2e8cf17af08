/* The C caller of the one-sample entries: composedyn.dynamics.compiled._call.Lean.
 *
 * A Lean object holds the machine address of one compiled entry (a numba cfunc
 * of composedyn.dynamics.compiled.lean; all share the signature kernel_t below)
 * and the robot's packed model arrays (im, fm).  Called with the entry's input
 * vectors (then, for forward dynamics, a float, positional or by its keyword)
 * and optionally out=, it checks in C that each vector is a numpy float64
 * ndarray of shape (n,) in native byte order (a strided one is copied), and
 * that out is a writeable C-contiguous float64 ndarray of the result's shape
 * ((n,) or (n, n)); it then calls the entry with the data pointers and returns
 * out (a new array when none was given).
 *
 * Anything else -- another type, dtype, shape, byte order or keyword, an entry
 * status other than 0 (NaN or inf in an input, a singular mass matrix), or the
 * switch array reading 0 -- goes to the fallback with the original arguments,
 * and its result is returned (fallback None: the call returns None).  With
 * nan_fill, status 2 (NaN or inf in) returns out filled with NaN instead.
 *
 * The point is the cost of the call: numba's dispatcher, with its type
 * resolution and array unboxing, costs more than the whole kernel of a 6-joint
 * arm; this costs a few dozen nanoseconds.  The entry runs with the GIL held.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef int64_t (*kernel_t)(const int64_t *im, const double *fm, int64_t n, const double *x0,
                            const double *x1, const double *x2, double s, double *out);

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    kernel_t fn;
    PyObject *keep;      /* (im, fm, switch): alive while their pointers are used */
    const int64_t *im;
    const double *fm;
    const int64_t *on;   /* the switch: the entry is used while *on != 0 */
    npy_intp n;
    int nin, nscalar, matrix, nan_fill;
    PyObject *scalar;    /* keyword name of the float argument (str), or None */
    PyObject *fallback;
    PyObject *dict;      /* __doc__ and the like */
} Lean;

static PyObject *fall(Lean *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (self->fallback == Py_None) Py_RETURN_NONE;
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* x[k]: the data of args[k] if it is a float64 (n,) ndarray; strided ones are copied into buf. */
static int vector(PyObject *o, npy_intp n, double *buf, const double **x) {
    if (!PyArray_CheckExact(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_ISNOTSWAPPED(a) || PyArray_NDIM(a) != 1
            || PyArray_DIM(a, 0) != n)
        return 0;
    if (PyArray_STRIDE(a, 0) == (npy_intp)sizeof(double)) {
        *x = (const double *)PyArray_DATA(a);
        return 1;
    }
    if (!PyArray_ISALIGNED(a)) return 0;
    const char *p = PyArray_BYTES(a);
    npy_intp stride = PyArray_STRIDE(a, 0);
    for (npy_intp i = 0; i < n; i++) buf[i] = *(const double *)(p + i * stride);
    *x = buf;
    return 1;
}

static int out_ok(Lean *self, PyObject *o) {
    if (!PyArray_CheckExact(o)) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    return PyArray_TYPE(a) == NPY_DOUBLE && PyArray_ISNOTSWAPPED(a) && PyArray_IS_C_CONTIGUOUS(a)
        && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 1 + self->matrix && PyArray_DIM(a, 0) == self->n
        && (!self->matrix || PyArray_DIM(a, 1) == self->n);
}

#define STACK 64  /* strided inputs of up to this many joints are copied on the stack */

static PyObject *lean_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Lean *self = (Lean *)obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    npy_intp n = self->n;
    const double *x[3] = {NULL, NULL, NULL};
    double stack[3 * STACK], *buf = stack, s = 0.0;
    PyObject *out = NULL, *result;
    if (!*self->on || nargs < self->nin || nargs > self->nin + self->nscalar)
        return fall(self, args, nargsf, kwnames);
    if (nargs > self->nin) {
        if (!PyFloat_Check(args[self->nin])) return fall(self, args, nargsf, kwnames);
        s = PyFloat_AS_DOUBLE(args[self->nin]);
    }
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *val = args[nargs + k];
        if (PyUnicode_CheckExact(key) && PyUnicode_CompareWithASCIIString(key, "out") == 0) {
            if (val == Py_None) continue;
            if (!out_ok(self, val)) return fall(self, args, nargsf, kwnames);
            out = val;
        } else if (self->nscalar && nargs == self->nin && PyUnicode_Check(key)
                   && PyUnicode_Compare(key, self->scalar) == 0 && PyFloat_Check(val)) {
            s = PyFloat_AS_DOUBLE(val);
        } else {
            return fall(self, args, nargsf, kwnames);
        }
    }
    if (n > STACK) {
        buf = PyMem_Malloc(3 * n * sizeof(double));
        if (buf == NULL) return PyErr_NoMemory();
    }
    for (int k = 0; k < self->nin; k++) {
        if (!vector(args[k], n, buf + k * n, &x[k])) {
            result = fall(self, args, nargsf, kwnames);
            goto done;
        }
    }
    if (out != NULL) {
        Py_INCREF(out);
    } else {
        npy_intp dims[2] = {n, n};
        out = PyArray_EMPTY(1 + self->matrix, dims, NPY_DOUBLE, 0);
        if (out == NULL) { result = NULL; goto done; }
    }
    double *o = (double *)PyArray_DATA((PyArrayObject *)out);
    int64_t status = self->fn(self->im, self->fm, (int64_t)n, x[0], x[1], x[2], s, o);
    if (status == 0) {
        result = out;
    } else if (status == 2 && self->nan_fill) {
        npy_intp size = PyArray_SIZE((PyArrayObject *)out);
        for (npy_intp i = 0; i < size; i++) o[i] = NAN;
        result = out;
    } else {
        Py_DECREF(out);
        result = fall(self, args, nargsf, kwnames);
    }
done:
    if (buf != stack) PyMem_Free(buf);
    return result;
}

static int lean_traverse(Lean *self, visitproc visit, void *arg) {
    Py_VISIT(self->keep);
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    Py_VISIT(self->scalar);
    return 0;
}

static int lean_clear(Lean *self) {
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    Py_CLEAR(self->scalar);
    return 0;  /* keep stays until dealloc: the pointers above point into it */
}

static void lean_dealloc(Lean *self) {
    PyObject_GC_UnTrack(self);
    lean_clear(self);
    Py_CLEAR(self->keep);
    PyObject_GC_Del(self);
}

static int is_array(PyObject *o, int type, int ndim) {
    return PyArray_CheckExact(o) && PyArray_TYPE((PyArrayObject *)o) == type
        && PyArray_ISNOTSWAPPED((PyArrayObject *)o) && PyArray_NDIM((PyArrayObject *)o) == ndim
        && PyArray_IS_C_CONTIGUOUS((PyArrayObject *)o);
}

static PyObject *lean_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"address", "im", "fm", "inputs", "scalar", "matrix", "nan_fill", "switch",
                            "fallback", NULL};
    PyObject *address, *im, *fm, *scalar, *on, *fallback;
    int nin, matrix, nan_fill;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOiOppOO", names, &address, &im, &fm, &nin, &scalar,
                                     &matrix, &nan_fill, &on, &fallback))
        return NULL;
    if (scalar != Py_None && !PyUnicode_Check(scalar)) {
        PyErr_SetString(PyExc_TypeError, "Lean: scalar must be the float argument's name (str) or None");
        return NULL;
    }
    if (!is_array(im, NPY_INT64, 2) || !is_array(fm, NPY_DOUBLE, 2)
            || PyArray_DIM((PyArrayObject *)im, 0) != PyArray_DIM((PyArrayObject *)fm, 0)
            || PyArray_DIM((PyArrayObject *)im, 0) < 1) {
        PyErr_SetString(PyExc_ValueError, "Lean: im must be int64 (n, k) and fm float64 (n, m), "
                                          "C-contiguous, with the same n >= 1");
        return NULL;
    }
    if (!is_array(on, NPY_INT64, 1) || PyArray_DIM((PyArrayObject *)on, 0) != 1) {
        PyErr_SetString(PyExc_ValueError, "Lean: switch must be an int64 array of shape (1,)");
        return NULL;
    }
    if (nin < 1 || nin > 3) {
        PyErr_SetString(PyExc_ValueError, "Lean: 1 to 3 vector inputs");
        return NULL;
    }
    if (fallback != Py_None && !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Lean: fallback must be callable or None");
        return NULL;
    }
    void *fn = PyLong_AsVoidPtr(address);
    if (fn == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "Lean: null entry address");
        return NULL;
    }
    PyObject *keep = PyTuple_Pack(3, im, fm, on);
    if (keep == NULL) return NULL;
    Lean *self = PyObject_GC_New(Lean, type);
    if (self == NULL) { Py_DECREF(keep); return NULL; }
    self->vectorcall = lean_call;
    self->fn = (kernel_t)fn;
    self->keep = keep;
    self->im = (const int64_t *)PyArray_DATA((PyArrayObject *)im);
    self->fm = (const double *)PyArray_DATA((PyArrayObject *)fm);
    self->on = (const int64_t *)PyArray_DATA((PyArrayObject *)on);
    self->n = PyArray_DIM((PyArrayObject *)im, 0);
    self->nin = nin;
    self->nscalar = scalar != Py_None;
    Py_INCREF(scalar);
    self->scalar = scalar;
    self->matrix = matrix;
    self->nan_fill = nan_fill;
    Py_INCREF(fallback);
    self->fallback = fallback;
    self->dict = NULL;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyObject *lean_fallback(Lean *self, void *closure) {
    Py_INCREF(self->fallback);
    return self->fallback;
}

static PyGetSetDef lean_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)lean_fallback, NULL, "What the call returns when it cannot serve the arguments.", NULL},
    {NULL},
};

static PyTypeObject LeanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "composedyn.dynamics.compiled._call.Lean",
    .tp_basicsize = sizeof(Lean),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Lean(address, im, fm, inputs, scalar, matrix, nan_fill, switch, fallback): a compiled "
              "one-sample entry called from Python without numba's dispatch (see the module source).",
    .tp_new = lean_new,
    .tp_dealloc = (destructor)lean_dealloc,
    .tp_traverse = (traverseproc)lean_traverse,
    .tp_clear = (inquiry)lean_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Lean, vectorcall),
    .tp_dictoffset = offsetof(Lean, dict),
    .tp_getset = lean_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_call",
                                    "The C caller of composedyn's one-sample compiled entries.", -1, NULL};

PyMODINIT_FUNC PyInit__call(void) {
    import_array();
    if (PyType_Ready(&LeanType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&LeanType);
    if (PyModule_AddObject(m, "Lean", (PyObject *)&LeanType) < 0) {
        Py_DECREF(&LeanType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
