/* The HTML report's code and style (output/html/), embedded into cgprof
 * as NUL-terminated strings: cgprof_html_js, cgprof_html_css. */
    .section .rodata
    .globl cgprof_html_js
    .type cgprof_html_js, @object
cgprof_html_js:
    .incbin "output/html/page.js"
    .byte 0
    .size cgprof_html_js, . - cgprof_html_js
    .globl cgprof_html_css
    .type cgprof_html_css, @object
cgprof_html_css:
    .incbin "output/html/page.css"
    .byte 0
    .size cgprof_html_css, . - cgprof_html_css
    .section .note.GNU-stack,"",@progbits
