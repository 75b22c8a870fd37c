# The Vulkan backend's compute shaders: each entry NAME:SOURCE:DEFINES (DEFINES separated by
# commas) is compiled by glslc at build time into SPIR-V and embedded in the binary as the array
# difftx::backends::vulkan::spirv::NAME; shader_table.cpp lists them all for
# backends/vulkan/pipelines.h (a shader is looked up by NAME). Adds the generated sources to
# TARGET. A new shader or variant is one entry here.
set(DIFFTX_VULKAN_WEIGHT_TYPES f32 bf16 f16 q8_0 q4_0 q4_k)  # WTYPE 0-5, shaders/weights.glsl
set(DIFFTX_VULKAN_SHADERS
  rope:rope.comp: gather_rows:gather_rows.comp:
  add:elementwise.comp:OP=0 scale:elementwise.comp:OP=1 swiglu:elementwise.comp:OP=2
  diff_lambda_f64:diff_lambda.comp:FLOAT64=1 diff_lambda_f32:diff_lambda.comp:FLOAT64=0
  attention_prefill_v64:attention_prefill.comp:VMAX=64 attention_prefill_v128:attention_prefill.comp:VMAX=128
  attention_prefill_v256:attention_prefill.comp:VMAX=256
  paged_store:paged_store.comp: paged_merge:paged_merge.comp:
  add_bias:add_bias.comp: mamba_conv:mamba_conv.comp: mamba_scan:mamba_scan.comp:
  matmul_slices:matmul_slices.comp:)
foreach(norm rmsnorm layernorm polynorm)  # blocks of 256, 2048, 4096 floats: ops_common.h norm_shader
  list(APPEND DIFFTX_VULKAN_SHADERS ${norm}_256:${norm}.comp:WG=32,PER=8 ${norm}_2048:${norm}.comp:WG=128,PER=16
       ${norm}_4096:${norm}.comp:WG=256,PER=16)
endforeach()
# Decode attention by the (row, map) pairs a workgroup scores, rows * maps per kv head: ops_attention.cpp
# takes the smallest bound that holds them. "s": each value loaded once for all the pairs; without, each
# pair loads its own (a row alone on a CPU device, lavapipe, where that is faster).
foreach(n 1 2 4 8 16 32)
  list(APPEND DIFFTX_VULKAN_SHADERS paged_attention_p${n}s:paged_attention.comp:PAIRS=${n},SHARED_VALUES=1
       paged_attention_p${n}:paged_attention.comp:PAIRS=${n},SHARED_VALUES=0)
endforeach()
foreach(index RANGE 5)
  list(GET DIFFTX_VULKAN_WEIGHT_TYPES ${index} type)
  list(APPEND DIFFTX_VULKAN_SHADERS embed_${type}:embed.comp:WTYPE=${index})
  foreach(m 16 64)  # rows of x a GEMM tile takes: ops_matmul.cpp takes 16 for a short prompt
    list(APPEND DIFFTX_VULKAN_SHADERS matmul_gemm${m}_${type}:matmul_gemm.comp:WTYPE=${index},BM=${m})
  endforeach()
  foreach(n 1 2 4 8 16)  # rows of x: ops_matmul.cpp takes the smallest that holds them; "u": unaligned
    list(APPEND DIFFTX_VULKAN_SHADERS matmul_gemv${n}_${type}:matmul_gemv.comp:WTYPE=${index},NMAX=${n},ALIGNED=1
         matmul_gemv${n}u_${type}:matmul_gemv.comp:WTYPE=${index},NMAX=${n},ALIGNED=0)
  endforeach()
  if(index GREATER 0)  # F32 weights keep the exact F32 GEMM; "e": the fragments emulated (tests)
    list(APPEND DIFFTX_VULKAN_SHADERS matmul_coopmat_${type}:matmul_coopmat.comp:WTYPE=${index},EMULATED=0
         matmul_coopmate_${type}:matmul_coopmat.comp:WTYPE=${index},EMULATED=1)
  endif()
endforeach()

function(difftx_add_vulkan_shaders TARGET)
  find_program(DIFFTX_GLSLC glslc)
  if(NOT DIFFTX_GLSLC)
    message(FATAL_ERROR "glslc not found: the Vulkan backend's shaders need it (Debian: glslc; scripts/setup installs it)")
  endif()
  find_path(DIFFTX_VULKAN_INCLUDE vulkan/vulkan_core.h)
  if(NOT DIFFTX_VULKAN_INCLUDE)
    message(FATAL_ERROR "vulkan/vulkan_core.h not found (Debian: libvulkan-dev; scripts/setup installs it)")
  endif()
  target_include_directories(${TARGET} PRIVATE ${DIFFTX_VULKAN_INCLUDE})
  # Vulkan's structs are written {VK_STRUCTURE_TYPE_...}: the type first, every other field zero.
  file(GLOB backend_sources ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../*.cpp)
  set_source_files_properties(${backend_sources} PROPERTIES COMPILE_OPTIONS -Wno-missing-field-initializers)
  set(dir ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  set(out ${CMAKE_BINARY_DIR}/generated/vulkan)
  file(MAKE_DIRECTORY ${out})
  set(sources "")
  set(declarations "")
  set(entries "")
  foreach(entry ${DIFFTX_VULKAN_SHADERS})
    string(REPLACE ":" ";" parts "${entry}")
    list(GET parts 0 name)
    list(GET parts 1 source)
    list(LENGTH parts n)
    set(defines "")
    if(n GREATER 2)
      list(GET parts 2 define_list)
      string(REPLACE "," ";" define_list "${define_list}")
      foreach(d ${define_list})
        list(APPEND defines -D${d})
      endforeach()
    endif()
    add_custom_command(OUTPUT ${out}/${name}.spv
      COMMAND ${DIFFTX_GLSLC} --target-env=vulkan1.1 -O -I${dir} ${defines} -MD -MF ${out}/${name}.spv.d
              -o ${out}/${name}.spv ${dir}/${source}
      DEPENDS ${dir}/${source}
      DEPFILE ${out}/${name}.spv.d
      COMMENT "glslc ${name}"
      VERBATIM)
    add_custom_command(OUTPUT ${out}/${name}.cpp
      COMMAND ${CMAKE_COMMAND} -DNAME=${name} -DIN=${out}/${name}.spv -DOUT=${out}/${name}.cpp -P ${dir}/embed_spirv.cmake
      DEPENDS ${out}/${name}.spv ${dir}/embed_spirv.cmake
      VERBATIM)
    list(APPEND sources ${out}/${name}.cpp)
    string(APPEND declarations "extern const uint32_t ${name}[];\nextern const size_t ${name}_words;\n")
    string(APPEND entries "    {\"${name}\", ${name}, ${name}_words},\n")
  endforeach()
  file(CONFIGURE OUTPUT ${out}/shader_table.cpp CONTENT "// Generated by shaders.cmake: every embedded shader.
#include \"backends/vulkan/pipelines.h\"

namespace difftx::backends::vulkan {
namespace spirv {
${declarations}}  // namespace spirv

std::span<const ShaderCode> shader_codes() {
  using namespace spirv;
  static const ShaderCode codes[] = {
${entries}  };
  return codes;
}

}  // namespace difftx::backends::vulkan
")
  target_sources(${TARGET} PRIVATE ${sources} ${out}/shader_table.cpp)
endfunction()
