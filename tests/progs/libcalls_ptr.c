/* libcalls_ptr: hands out &strlen as a module that takes it sees it. */
#include <string.h>
void *lc_lib_strlen_ptr(void)
{
    return (void *)strlen;
}
