/*
 * typelattice._speedups: C fast paths for result_type, lattice_result_type
 * and promote_types (typelattice._promotion).
 *
 * A fast path does only what its Python function does before the first cache
 * miss: read the scoped configuration (the ContextVar _config._scope), take
 * the memo dict in force (the global state's, which _promotion pushes here
 * with set_global_memos, or the scoped state's), build the same key and
 * return the cached entry. Everything else -- a miss, an unusual call, an
 * entry of an unexpected shape -- is handed to the Python function itself,
 * with the arguments exactly as given, so the promotion logic stays in
 * Python and every answer, warning and error is the Python one.
 *
 * Errors raised by the steps mirrored here are handled as the Python code
 * handles them: propagated by result_type and lattice_result_type, and for
 * promote_types a KeyError or TypeError from the lookup means "not cached".
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

#ifdef Py_GIL_DISABLED
/* The lookups below hold borrowed references from dicts, which is only safe
   under the GIL. The extension is optional: this build uses pure Python. */
#error "typelattice._speedups needs the GIL"
#endif

/* Bumped whenever the interface _promotion uses changes, so a stale build
   (an editable install compiled from older sources) is ignored. */
#define API_VERSION 1

enum kind { RESULT_TYPE, LATTICE_RESULT_TYPE, PROMOTE_TYPES };

static const char *const kind_names[] = {
    "result_type",
    "lattice_result_type",
    "promote_types",
};

/* Set by configure(): _config._scope and numpy.ndarray. */
static PyObject *scope_var;
static PyObject *ndarray_type;
/* Set by set_global_memos(): the global state's memo and promotion_memo. */
static PyObject *global_memo;
static PyObject *global_promotion_memo;

static PyObject *str_resolve;
static PyObject *str_memo;
static PyObject *str_promotion_memo;
static PyObject *str_dtype;
static PyObject *str_flag;
static PyObject *str_qualname;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback; /* the Python function */
    PyObject *dict;     /* __dict__: __name__, __doc__, __wrapped__... */
    int kind;
} FastPath;

static PyObject *
fall_back(FastPath *self, PyObject *const *args, size_t nargsf,
          PyObject *kwnames)
{
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

/* The memo in force here, as a new reference: the global one, or the
 * attribute `name` of scope.resolve(). NULL with an exception set when a
 * step failed; NULL without one when there is nothing to look up in (not
 * configured, or not a dict), which means "ask Python". */
static PyObject *
memo_in_force(PyObject *global, PyObject *name)
{
    PyObject *scope = NULL;
    PyObject *state;
    PyObject *memo;

    if (scope_var == NULL || global == NULL) {
        return NULL;
    }
    if (PyContextVar_Get(scope_var, NULL, &scope) < 0) {
        return NULL;
    }
    if (scope == NULL) { /* no value and no default: not ours to explain */
        return NULL;
    }
    if (scope == Py_None) {
        Py_DECREF(scope);
        memo = Py_NewRef(global);
    }
    else {
        state = PyObject_CallMethodNoArgs(scope, str_resolve);
        Py_DECREF(scope);
        if (state == NULL) {
            return NULL;
        }
        memo = PyObject_GetAttr(state, name);
        Py_DECREF(state);
        if (memo == NULL) {
            return NULL;
        }
    }
    if (!PyDict_CheckExact(memo)) {
        Py_DECREF(memo);
        return NULL;
    }
    return memo;
}

/* memo.get(key) as a new reference; a stored None counts as a miss, as in
 * `if entry is None`. NULL, with or without an exception. */
static PyObject *
memo_get(PyObject *memo, PyObject *key)
{
    PyObject *entry = PyDict_GetItemWithError(memo, key);

    if (entry == NULL || entry == Py_None) {
        return NULL;
    }
    return Py_NewRef(entry);
}

/* The cached entry for result_type(*args), as result_type looks it up:
 * first under the tuple of the arguments' types, then, if an argument is an
 * exact ndarray, with the type of its dtype in its place. */
static PyObject *
cached_entry(PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *memo;
    PyObject *key;
    PyObject *entry;
    Py_ssize_t i;
    int has_array = 0;

    memo = memo_in_force(global_memo, str_memo);
    if (memo == NULL) {
        return NULL;
    }
    key = PyTuple_New(nargs);
    if (key == NULL) {
        Py_DECREF(memo);
        return NULL;
    }
    for (i = 0; i < nargs; i++) {
        PyTypeObject *t = Py_TYPE(args[i]);
        if ((PyObject *)t == ndarray_type) {
            has_array = 1;
        }
        PyTuple_SET_ITEM(key, i, Py_NewRef((PyObject *)t));
    }
    entry = memo_get(memo, key);
    Py_DECREF(key);
    /* Without an array the second key is the first one: already a miss. */
    if (entry != NULL || PyErr_Occurred() || !has_array) {
        Py_DECREF(memo);
        return entry;
    }
    key = PyTuple_New(nargs);
    if (key == NULL) {
        Py_DECREF(memo);
        return NULL;
    }
    for (i = 0; i < nargs; i++) {
        PyObject *t = (PyObject *)Py_TYPE(args[i]);
        if (t == ndarray_type) {
            PyObject *dtype = PyObject_GetAttr(args[i], str_dtype);
            if (dtype == NULL) {
                Py_DECREF(key);
                Py_DECREF(memo);
                return NULL;
            }
            t = (PyObject *)Py_TYPE(dtype);
            Py_INCREF(t);
            Py_DECREF(dtype);
        }
        else {
            Py_INCREF(t);
        }
        PyTuple_SET_ITEM(key, i, t);
    }
    entry = memo_get(memo, key);
    Py_DECREF(key);
    Py_DECREF(memo);
    return entry;
}

static int
is_flag_name(PyObject *name)
{
    return name == str_flag ||
           (PyUnicode_CheckExact(name) &&
            PyUnicode_Compare(name, str_flag) == 0);
}

/* result_type and lattice_result_type: entries are
 * (public dtype, weak, operation dtype). */
static PyObject *
result_type_vectorcall(FastPath *self, PyObject *const *args, size_t nargsf,
                       PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    int with_flag = 0;
    PyObject *entry;
    PyObject *out;

    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) {
        PyObject *value = args[nargs];
        /* Only result_type(..., return_weak_type_flag=<a bool>); anything
           else (other names, truthy non-bools) is Python's to handle. */
        if (self->kind != RESULT_TYPE || PyTuple_GET_SIZE(kwnames) != 1 ||
            !is_flag_name(PyTuple_GET_ITEM(kwnames, 0)) ||
            (value != Py_True && value != Py_False)) {
            return fall_back(self, args, nargsf, kwnames);
        }
        with_flag = value == Py_True;
    }
    entry = cached_entry(args, nargs);
    if (entry == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        return fall_back(self, args, nargsf, kwnames);
    }
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3) {
        Py_DECREF(entry);
        return fall_back(self, args, nargsf, kwnames);
    }
    if (self->kind == LATTICE_RESULT_TYPE) {
        out = PyTuple_Pack(2, PyTuple_GET_ITEM(entry, 2),
                           PyTuple_GET_ITEM(entry, 1));
    }
    else if (with_flag) {
        out = PyTuple_Pack(2, PyTuple_GET_ITEM(entry, 0),
                           PyTuple_GET_ITEM(entry, 1));
    }
    else {
        out = Py_NewRef(PyTuple_GET_ITEM(entry, 0));
    }
    Py_DECREF(entry);
    return out;
}

/* promote_types(a, b): promotion_memo[(a, b)]. */
static PyObject *
promote_types_vectorcall(FastPath *self, PyObject *const *args,
                         size_t nargsf, PyObject *kwnames)
{
    PyObject *memo;
    PyObject *key;
    PyObject *found;

    if (PyVectorcall_NARGS(nargsf) != 2 ||
        (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        return fall_back(self, args, nargsf, kwnames);
    }
    memo = memo_in_force(global_promotion_memo, str_promotion_memo);
    if (memo != NULL) {
        key = PyTuple_Pack(2, args[0], args[1]);
        if (key == NULL) {
            Py_DECREF(memo);
            return NULL;
        }
        found = PyDict_GetItemWithError(memo, key);
        Py_XINCREF(found);
        Py_DECREF(key);
        Py_DECREF(memo);
        if (found != NULL) {
            return found;
        }
    }
    if (PyErr_Occurred()) {
        /* The Python function catches these two around the lookup. */
        if (!PyErr_ExceptionMatches(PyExc_KeyError) &&
            !PyErr_ExceptionMatches(PyExc_TypeError)) {
            return NULL;
        }
        PyErr_Clear();
    }
    return fall_back(self, args, nargsf, kwnames);
}

/* -- the FastPath type ------------------------------------------------------ */

static PyObject *
FastPath_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"kind", "fallback", NULL};
    const char *kind_name;
    PyObject *fallback;
    FastPath *self;
    int kind;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "sO:FastPath", keywords,
                                     &kind_name, &fallback)) {
        return NULL;
    }
    for (kind = 0; kind < 3; kind++) {
        if (strcmp(kind_name, kind_names[kind]) == 0) {
            break;
        }
    }
    if (kind == 3) {
        PyErr_Format(PyExc_ValueError,
                     "kind must be 'result_type', 'lattice_result_type' or "
                     "'promote_types', not '%s'",
                     kind_name);
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_Format(PyExc_TypeError, "fallback must be callable, not %R",
                     fallback);
        return NULL;
    }
    self = (FastPath *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->kind = kind;
    self->fallback = Py_NewRef(fallback);
    self->dict = NULL;
    self->vectorcall = kind == PROMOTE_TYPES
                           ? (vectorcallfunc)promote_types_vectorcall
                           : (vectorcallfunc)result_type_vectorcall;
    return (PyObject *)self;
}

static int
FastPath_traverse(FastPath *self, visitproc visit, void *arg)
{
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    return 0;
}

static int
FastPath_clear(FastPath *self)
{
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;
}

static void
FastPath_dealloc(FastPath *self)
{
    PyObject_GC_UnTrack(self);
    FastPath_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
FastPath_repr(FastPath *self)
{
    return PyUnicode_FromFormat("<C fast path of %R>", self->fallback);
}

/* Pickled by name, like the function it stands for. */
static PyObject *
FastPath_reduce(FastPath *self, PyObject *Py_UNUSED(ignored))
{
    return PyObject_GetAttr((PyObject *)self, str_qualname);
}

static PyObject *
FastPath_get_fallback(FastPath *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->fallback);
}

static PyObject *
FastPath_get_kind(FastPath *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(kind_names[self->kind]);
}

static PyMethodDef FastPath_methods[] = {
    {"__reduce__", (PyCFunction)FastPath_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FastPath_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"fallback", (getter)FastPath_get_fallback, NULL,
     "The Python function called on a cache miss.", NULL},
    {"kind", (getter)FastPath_get_kind, NULL,
     "Which lookup this is: 'result_type', 'lattice_result_type' or "
     "'promote_types'.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FastPath_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "typelattice._speedups.FastPath",
    .tp_basicsize = sizeof(FastPath),
    .tp_dealloc = (destructor)FastPath_dealloc,
    .tp_vectorcall_offset = offsetof(FastPath, vectorcall),
    .tp_repr = (reprfunc)FastPath_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = PyDoc_STR(
        "FastPath(kind, fallback)\n--\n\n"
        "A callable that answers from typelattice's promotion memos and calls "
        "fallback, with the same arguments, whenever it cannot."),
    .tp_traverse = (traverseproc)FastPath_traverse,
    .tp_clear = (inquiry)FastPath_clear,
    .tp_methods = FastPath_methods,
    .tp_getset = FastPath_getset,
    .tp_dictoffset = offsetof(FastPath, dict),
    .tp_new = FastPath_new,
};

/* -- module functions ---------------------------------------------------------- */

static PyObject *
configure(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "configure(scope, ndarray) takes 2 arguments");
        return NULL;
    }
    if (!PyContextVar_CheckExact(args[0])) {
        PyErr_Format(PyExc_TypeError, "scope must be a ContextVar, not %R",
                     args[0]);
        return NULL;
    }
    if (!PyType_Check(args[1])) {
        PyErr_Format(PyExc_TypeError, "ndarray must be a type, not %R",
                     args[1]);
        return NULL;
    }
    Py_XSETREF(scope_var, Py_NewRef(args[0]));
    Py_XSETREF(ndarray_type, Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

static PyObject *
set_global_memos(PyObject *Py_UNUSED(module), PyObject *const *args,
                 Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError,
                        "set_global_memos(memo, promotion_memo) takes 2 "
                        "arguments");
        return NULL;
    }
    if (!PyDict_Check(args[0]) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "the memos must be dicts");
        return NULL;
    }
    Py_XSETREF(global_memo, Py_NewRef(args[0]));
    Py_XSETREF(global_promotion_memo, Py_NewRef(args[1]));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     PyDoc_STR("configure(scope, ndarray)\n--\n\n"
               "Set the ContextVar holding the scoped configuration and the "
               "ndarray type.")},
    {"set_global_memos", (PyCFunction)(void (*)(void))set_global_memos,
     METH_FASTCALL,
     PyDoc_STR("set_global_memos(memo, promotion_memo)\n--\n\n"
               "Set the memos of the global configuration state.")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "typelattice._speedups",
    .m_doc = PyDoc_STR("C fast paths for typelattice's cached promotion "
                       "lookups (see typelattice._promotion)."),
    .m_size = -1,
    .m_methods = module_methods,
};

static int
intern(PyObject **slot, const char *text)
{
    *slot = PyUnicode_InternFromString(text);
    return *slot == NULL ? -1 : 0;
}

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *module;

    if (intern(&str_resolve, "resolve") < 0 || intern(&str_memo, "memo") < 0 ||
        intern(&str_promotion_memo, "promotion_memo") < 0 ||
        intern(&str_dtype, "dtype") < 0 ||
        intern(&str_flag, "return_weak_type_flag") < 0 ||
        intern(&str_qualname, "__qualname__") < 0) {
        return NULL;
    }
    if (PyType_Ready(&FastPath_Type) < 0) {
        return NULL;
    }
    module = PyModule_Create(&speedups_module);
    if (module == NULL) {
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "API_VERSION", API_VERSION) < 0 ||
        PyModule_AddObjectRef(module, "FastPath", (PyObject *)&FastPath_Type) <
            0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
