/* Embeds a GPU image (fatbin) as read-only data under SR_IMAGE_SYMBOL, NUL-terminated, hidden
 * from the dynamic symbol table. Assembled with -DSR_IMAGE_SYMBOL=name -DSR_IMAGE_FILE="path". */
    .section .rodata
    .balign 64
    .globl SR_IMAGE_SYMBOL
    .hidden SR_IMAGE_SYMBOL
    .type SR_IMAGE_SYMBOL, @object
SR_IMAGE_SYMBOL:
    .incbin SR_IMAGE_FILE
    .byte 0
    .size SR_IMAGE_SYMBOL, . - SR_IMAGE_SYMBOL
    .section .note.GNU-stack,"",@progbits
